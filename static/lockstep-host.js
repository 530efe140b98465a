// lockstep-host.js: drives the Lockstep embeds of a docs page, so the page writes no message
// handling of its own. Load it from the site that serves Lockstep:
//
//   <script src="https://example.org/lockstep/lockstep-host.js"></script>
//
// It finds every embed on the page (an iframe of class lockstep-embed, or whose address holds
// #/embed), styles and sizes each as embed-size.js does (the two may be on one page), and offers
// window.Lockstep:
//
//   Lockstep.embeds()              every embed on the page, found anew at each call
//   Lockstep.embed(idOrFrame)      one embed, by its id= or by its iframe element
//   embed.request(message)         sends a message with a fresh id; resolves with the reply that
//                                  echoes that id, rejects with the embed's lockstep:error
//   embed.ready                    a Promise of the embed's lockstep:ready message
//   embed.on(type, fn)             calls fn(message) for each message of that type
//   Lockstep.setTheme(theme)       'light', 'dark' or 'auto' (the reader's setting), to every
//                                  embed now and to each one that becomes ready later
//   Lockstep.followTheme(read)     calls read() now and whenever the page's <html> element
//                                  changes its class or attributes (how mdBook and Docusaurus
//                                  switch themes) or the reader's colour scheme changes, and
//                                  sets the theme it returns
//
// An embed answers only hosts its address lists in origins=, so list this page's origin. The
// messages go to the frame's own origin, never to '*'; a message counts only if it comes from
// the frame it names. Heights are the exception: they are no secret, and need no origin listed.
(function () {
  'use strict';
  if (window.Lockstep) return;
  var REQUEST_MS_MAX = 10000;
  var nextId = 1;
  var theme = null;
  var known = [];

  function isEmbed(frame) {
    return frame.classList.contains('lockstep-embed') || /#\/embed(\?|$)/.test(frame.getAttribute('src') || '');
  }

  function dress(frame) {
    if (frame.classList.contains('lockstep-embed')) {
      frame.style.width = '100%';
      frame.style.border = '0';
      if (!frame.style.height) frame.style.height = '520px';
    }
  }

  function Embed(frame) {
    var self = this;
    this.frame = frame;
    this.origin = new URL(frame.getAttribute('src') || '', location.href).origin;
    this.id = (/[#&?]id=([A-Za-z0-9_-]{1,64})(&|$)/.exec(frame.getAttribute('src') || '') || [])[1] || null;
    this.waiting = {};
    this.handlers = {};
    this.ready = new Promise(function (resolve, reject) {
      self.resolveReady = resolve;
      self.rejectReady = reject;
    });
    // A page that never asks for ready must not see an unhandled rejection.
    this.ready.catch(function () {});
    // This script may come after the embed's lockstep:ready: an embed that answers is ready.
    // The question carries nothing, so it may go to whatever the frame holds now ('*'): a frame
    // still loading has another origin, and a named one would be an error in the console.
    var probe = nextId++;
    this.waiting[probe] = function (reply) {
      delete self.waiting[probe];
      if (reply.type === 'lockstep:verdict') self.resolveReady(reply);
    };
    if (frame.contentWindow) frame.contentWindow.postMessage({ type: 'lockstep:get-verdict', id: probe }, '*');
  }

  Embed.prototype.post = function (message) {
    if (this.frame.contentWindow) this.frame.contentWindow.postMessage(message, this.origin);
  };

  Embed.prototype.request = function (message) {
    var self = this;
    var id = nextId++;
    var sent = Object.assign({}, message, { id: id });
    return this.ready.then(function () {
      return new Promise(function (resolve, reject) {
        var timer = setTimeout(function () {
          delete self.waiting[id];
          reject(new Error('no answer from the embed to ' + message.type + ' in ' + REQUEST_MS_MAX / 1000 + ' s'));
        }, REQUEST_MS_MAX);
        self.waiting[id] = function (reply) {
          clearTimeout(timer);
          delete self.waiting[id];
          if (reply.type === 'lockstep:error') reject(Object.assign(new Error(reply.error), { reply: reply }));
          else resolve(reply);
        };
        self.post(sent);
      });
    });
  };

  Embed.prototype.on = function (type, fn) {
    (this.handlers[type] = this.handlers[type] || []).push(fn);
    return this;
  };

  Embed.prototype.hear = function (message) {
    if (message.type === 'lockstep:height') {
      dress(this.frame);
      this.frame.style.height = Math.min(4000, Math.max(100, +message.px || 0)) + 'px';
    }
    if (message.type === 'lockstep:ready') {
      this.resolveReady(message);
      if (theme) this.post({ type: 'lockstep:set-theme', theme: theme });
    }
    if (message.type === 'lockstep:error' && message.id === undefined) this.rejectReady(new Error(message.error));
    if (message.id !== undefined && this.waiting[message.id]) this.waiting[message.id](message);
    (this.handlers[message.type] || []).forEach(function (fn) {
      fn(message);
    });
  };

  function embeds() {
    var frames = Array.prototype.filter.call(document.querySelectorAll('iframe'), isEmbed);
    known = frames.map(function (frame) {
      for (var i = 0; i < known.length; i++) if (known[i].frame === frame) return known[i];
      dress(frame);
      return new Embed(frame);
    });
    return known.slice();
  }

  addEventListener('message', function (e) {
    if (!e.data || typeof e.data.type !== 'string' || e.data.type.indexOf('lockstep:') !== 0) return;
    var all = embeds();
    for (var i = 0; i < all.length; i++) {
      if (e.source !== all[i].frame.contentWindow) continue;
      // Only the height may come from anywhere; the rest must come from the site's origin.
      if (e.data.type === 'lockstep:height' || e.origin === all[i].origin) all[i].hear(e.data);
    }
  });

  function setTheme(name) {
    if (['light', 'dark', 'auto'].indexOf(name) < 0) throw new Error('a theme is light, dark or auto, not ' + name);
    theme = name;
    embeds().forEach(function (embed) {
      embed.ready.then(function () {
        if (theme === name) embed.post({ type: 'lockstep:set-theme', theme: name });
      });
    });
  }

  function followTheme(read) {
    var last = null;
    function check() {
      var name = read();
      if (name && name !== last) {
        last = name;
        setTheme(name);
      }
    }
    new MutationObserver(check).observe(document.documentElement, { attributes: true });
    if (window.matchMedia) matchMedia('(prefers-color-scheme: dark)').addEventListener('change', check);
    check();
  }

  window.Lockstep = {
    embeds: embeds,
    embed: function (which) {
      return embeds().filter(function (e) {
        return e.frame === which || (which && e.id === which);
      })[0] || null;
    },
    setTheme: setTheme,
    followTheme: followTheme,
  };

  function start() {
    embeds().forEach(function (embed) {
      // Heights sent before this script listened are asked again.
      if (embed.frame.contentWindow) embed.frame.contentWindow.postMessage({ type: 'lockstep:get-height' }, '*');
    });
  }
  if (document.readyState === 'loading') addEventListener('DOMContentLoaded', start);
  else start();
})();
