// Sizes Lockstep embeds on a host page: each frame's height follows the height its embed
// reports. A message counts only if it comes from one of the page's own frames.
//
// The snippet's frame has a class (lockstep-embed) and no inline style, which a strict
// Content-Security-Policy refuses: this script gives it its width, border and first height
// through the CSSOM (element.style), which such a policy allows.
//
// The script may arrive long after the frames sent their heights (loaded late, a page that
// hydrates on a slow line): it asks every frame for its height as it starts, and an embed
// answers whenever a host asks.
(function () {
  function dress(frame) {
    if (frame.classList.contains('lockstep-embed')) {
      frame.style.width = '100%';
      frame.style.border = '0';
      if (!frame.style.height) frame.style.height = '520px';
    }
  }
  addEventListener('message', function (e) {
    var frames = document.querySelectorAll('iframe');
    for (var i = 0; i < frames.length; i++) {
      if (e.source === frames[i].contentWindow && e.data && e.data.type === 'lockstep:height') {
        dress(frames[i]);
        frames[i].style.height = Math.min(4000, Math.max(100, +e.data.px || 0)) + 'px';
      }
    }
  });
  function start() {
    var frames = document.querySelectorAll('iframe');
    for (var i = 0; i < frames.length; i++) {
      dress(frames[i]);
      // A height is no secret, so the question needs no origin; an embed answers any host.
      if (frames[i].contentWindow) frames[i].contentWindow.postMessage({ type: 'lockstep:get-height' }, '*');
    }
  }
  if (document.readyState === 'loading') addEventListener('DOMContentLoaded', start);
  else start();
})();
