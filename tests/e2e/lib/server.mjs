// A small static file server for dist/ on 127.0.0.1 with a free port.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json; charset=utf-8',
  '.toml': 'text/plain; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.map': 'application/json; charset=utf-8',
};

/**
 * Serves `root` and resolves to { url, close }. With `prefix` ('/lockstep'), the files are
 * served under that path only, as a host serves a site that lives under a sub-path, with no
 * rewrite: anything outside it is not found. `port` is a free one unless given (a built host
 * that names its own address).
 */
export async function serveDir(root, { prefix = '', port: wanted = 0 } = {}) {
  const absRoot = path.resolve(root);
  const server = http.createServer((req, res) => {
    let pathname;
    try {
      pathname = decodeURIComponent(new URL(req.url, 'http://127.0.0.1').pathname);
    } catch {
      res.writeHead(400).end('bad request');
      return;
    }
    if (prefix) {
      if (!pathname.startsWith(prefix + '/')) {
        res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found');
        return;
      }
      pathname = pathname.slice(prefix.length);
    }
    if (pathname.endsWith('/')) pathname += 'index.html';
    const file = path.resolve(absRoot, '.' + pathname);
    if (file !== absRoot && !file.startsWith(absRoot + path.sep)) {
      res.writeHead(403).end('forbidden');
      return;
    }
    fs.readFile(file, (err, data) => {
      if (err) {
        res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('not found');
        return;
      }
      res.writeHead(200, {
        'content-type': MIME[path.extname(file).toLowerCase()] || 'application/octet-stream',
        'content-length': data.length,
        'cache-control': 'no-store',
        // Nothing more: a plain static host (Python's http.server, a default nginx, a bucket)
        // sends no CORS or other special header, and the site must work there, embeds included.
      });
      res.end(req.method === 'HEAD' ? undefined : data);
    });
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(wanted, '127.0.0.1', resolve);
  });
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}${prefix}/`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

/**
 * Serves one HTML page, made by `page()` at each request, on another port (another origin) and
 * resolves to { url, origin, close }.
 */
export async function serveHtml(page, { headers = {}, files = {} } = {}) {
  // `files` maps a path to [content type, body], served beside the page from the same origin
  // (a host page's own scripts, which a strict policy allows as 'self'); `headers` are sent
  // with the page (a Content-Security-Policy, say).
  const server = http.createServer((req, res) => {
    const file = files[new URL(req.url, 'http://127.0.0.1').pathname];
    if (file) {
      res.writeHead(200, { 'content-type': file[0], 'cache-control': 'no-store' });
      res.end(file[1]);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store', ...headers });
    res.end(page());
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/`,
    origin: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}
