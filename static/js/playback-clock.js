// CaptionEval playback clock: how many seconds of a video were really played, for the watch gates of the
// rating page (static/js/da-rating.js) and the annotation page (static/js/factuality-annotate.js).
//
// "Played" means playback time, not the position reached: seeking (to the end, or anywhere) adds nothing. Between
// two samples taken while the video plays, the clock adds min(wall-clock time elapsed, clip time advanced): a
// stall adds nothing (the clip did not advance), a faster playback rate adds only the real time spent, and a seek
// drops the sample (the next one starts afresh). Samples come from the media element's events (timeupdate,
// pause, ended, waiting), or from any other player that reports its position (observe(), e.g. the YouTube
// embed's postMessage events).

export class PlaybackClock {
  constructor({onChange = null, now = () => performance.now()} = {}) {
    this.seconds = 0;
    this.last = null; // {wall (ms), position (s)} of the previous sample while playing
    this.onChange = onChange;
    this.now = now;
  }

  // A sample: the player's position now and whether it is playing.
  observe(position, playing) {
    if (!playing || !Number.isFinite(position)) {
      this.last = null;
      return;
    }
    const wall = this.now();
    if (this.last !== null) {
      const elapsed = (wall - this.last.wall) / 1000;
      const advanced = position - this.last.position;
      if (advanced > 0 && elapsed > 0) {
        this.seconds += Math.min(elapsed, advanced);
        if (this.onChange) this.onChange(this.seconds);
      }
    }
    this.last = {wall, position};
  }

  // Playback stopped (pause, end, stall): count up to here, then wait for the next start.
  stop(position) {
    if (this.last !== null) this.observe(position, true);
    this.last = null;
  }

  // A jump (seek): forget the previous sample without counting the jump.
  jump() {
    this.last = null;
  }

  // Follow an HTML5 <video> or <audio> element.
  attach(media) {
    const playing = () => !media.paused && !media.seeking && !media.ended;
    media.addEventListener("playing", () => this.observe(media.currentTime, true));
    media.addEventListener("timeupdate", () => {
      if (media.seeking) this.jump();
      else if (playing()) this.observe(media.currentTime, true);
    });
    for (const name of ["pause", "ended", "waiting"]) {
      media.addEventListener(name, () => this.stop(media.currentTime));
    }
    media.addEventListener("seeking", () => this.jump());
    media.addEventListener("seeked", () => { if (playing()) this.observe(media.currentTime, true); });
    return this;
  }
}

// Seconds of real playback a clip needs: the server's figure for the item when it knows the clip's duration,
// else the campaign's share of the duration the browser reports, capped; the cap alone when nothing is known.
export function requiredSeconds(duration, {fraction = 0.9, maxSeconds = 30, known = null} = {}) {
  if (Number.isFinite(known)) return known;
  if (!Number.isFinite(duration) || duration <= 0) return maxSeconds;
  return Math.min(maxSeconds, fraction * duration);
}
