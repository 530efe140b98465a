// Sizes Lockstep embeds on a host page: each frame's height follows the height its embed
// reports. A message counts only if it comes from one of the page's own frames.
addEventListener('message', function (e) {
  var frames = document.querySelectorAll('iframe');
  for (var i = 0; i < frames.length; i++) {
    if (e.source === frames[i].contentWindow && e.data && e.data.type === 'lockstep:height') {
      frames[i].style.height = Math.min(4000, Math.max(100, +e.data.px || 0)) + 'px';
    }
  }
});
