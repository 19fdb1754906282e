// CaptionEval video player: our own controls over an HTML5 <video>, keyboard shortcuts, and clickable
// sentence times. No dependencies. Markup: templates/datasets/video_detail.html ([data-player]).
//
// Shortcuts: Space / k play-pause, j / l -5 / +5 s, , / . previous / next frame, [ / ] slower / faster.
// Sentence times ([data-seek]) jump the video there and play; for a YouTube embed they restart the embed at
// that second (the embed's start parameter: no YouTube script is loaded).

const SPEEDS = [0.5, 0.75, 1, 1.25, 1.5, 2];
const JUMP_SECONDS = 5;

export function formatClock(seconds) {
  if (!Number.isFinite(seconds) || seconds < 0) return "–:––";
  const tenths = Math.floor(seconds * 10 + 1e-6);
  const total = Math.floor(tenths / 10);
  const minutes = Math.floor(total / 60);
  const secs = String(total % 60).padStart(2, "0");
  if (minutes >= 60) {
    return `${Math.floor(minutes / 60)}:${String(minutes % 60).padStart(2, "0")}:${secs}.${tenths % 10}`;
  }
  return `${minutes}:${secs}.${tenths % 10}`;
}

function isTyping(target) {
  if (!(target instanceof Element)) return false;
  if (target.isContentEditable) return true;
  if (target.closest("textarea, select")) return true;
  const input = target.closest("input");
  return Boolean(input) && !["range", "checkbox", "radio", "button", "submit"].includes(input.type);
}

export class Player {
  constructor(root) {
    this.root = root;
    this.video = root.querySelector("video");
    this.controls = root.querySelector('[data-role="controls"]');
    this.playButton = root.querySelector('[data-action="toggle"]');
    this.seekBar = root.querySelector('[data-role="seek"]');
    this.timeLabel = root.querySelector('[data-role="time"]');
    this.status = root.querySelector('[data-role="status"]');
    this.speedButtons = Array.from(root.querySelectorAll("[data-speed]"));
    this.frameStep = 1 / (Number(root.dataset.frameRate) || 25);
    this.sentences = Array.from(document.querySelectorAll(".sentence[data-start]"));
    this.dragging = false;

    // Our controls replace the browser's (which stay as the fallback when this script does not run).
    this.video.controls = false;
    this.controls.hidden = false;
    this.bind();
    this.render();
  }

  bind() {
    const video = this.video;
    this.root.addEventListener("click", (event) => {
      const button = event.target.closest("button");
      if (!button || !this.root.contains(button)) return;
      if (button.dataset.speed) return this.setSpeed(Number(button.dataset.speed));
      switch (button.dataset.action) {
        case "toggle": return this.toggle();
        case "back": return this.jump(-JUMP_SECONDS);
        case "forward": return this.jump(JUMP_SECONDS);
        case "frame-back": return this.stepFrame(-1);
        case "frame-forward": return this.stepFrame(1);
        case "fullscreen": return this.fullscreen();
      }
    });
    this.video.addEventListener("click", () => this.toggle());
    this.seekBar.addEventListener("input", () => {
      this.dragging = true;
      this.seek(Number(this.seekBar.value));
    });
    this.seekBar.addEventListener("change", () => { this.dragging = false; });
    for (const name of ["play", "pause", "ended", "timeupdate", "durationchange", "loadedmetadata", "ratechange", "seeked"]) {
      video.addEventListener(name, () => this.render());
    }
    video.addEventListener("error", () => {
      const code = video.error ? video.error.code : "?";
      this.showStatus(`The video could not be loaded or played (media error ${code}).`);
    });
  }

  get duration() {
    const d = this.video.duration;
    if (Number.isFinite(d)) return d;
    const ranges = this.video.seekable;
    return ranges && ranges.length ? ranges.end(ranges.length - 1) : NaN;
  }

  clamp(t) {
    const d = this.duration;
    return Math.max(0, Number.isFinite(d) ? Math.min(t, d) : t);
  }

  play() {
    const promise = this.video.play();
    if (promise && promise.catch) {
      promise.catch((error) => {
        if (error && error.name !== "AbortError") this.showStatus(`Playback failed: ${error.message}`);
      });
    }
  }

  toggle() {
    if (this.video.paused || this.video.ended) this.play();
    else this.video.pause();
  }

  seek(t) {
    this.video.currentTime = this.clamp(t);
    this.render();
  }

  jump(delta) { this.seek(this.video.currentTime + delta); }

  stepFrame(direction) {
    this.video.pause();
    this.seek(this.video.currentTime + direction * this.frameStep);
  }

  setSpeed(rate) {
    this.video.playbackRate = rate;
    this.render();
  }

  changeSpeed(direction) {
    const current = this.video.playbackRate;
    let index = SPEEDS.findIndex((s) => Math.abs(s - current) < 1e-9);
    if (index < 0) index = SPEEDS.indexOf(1);
    const next = SPEEDS[Math.min(SPEEDS.length - 1, Math.max(0, index + direction))];
    this.setSpeed(next);
  }

  fullscreen() {
    const stage = this.root.querySelector(".player__stage") || this.video;
    if (document.fullscreenElement) document.exitFullscreen();
    else if (stage.requestFullscreen) stage.requestFullscreen().catch(() => {});
  }

  showStatus(text) {
    if (this.status) this.status.textContent = text;
  }

  render() {
    const video = this.video;
    const d = this.duration;
    const playing = !video.paused && !video.ended;
    this.playButton.textContent = playing ? "Pause" : "Play";
    this.playButton.setAttribute("aria-label", playing ? "Pause" : "Play");
    if (Number.isFinite(d)) this.seekBar.max = String(d);
    if (!this.dragging) this.seekBar.value = String(video.currentTime);
    this.seekBar.setAttribute("aria-valuetext", formatClock(video.currentTime));
    this.timeLabel.textContent = `${formatClock(video.currentTime)} / ${formatClock(d)}`;
    for (const button of this.speedButtons) {
      button.setAttribute("aria-pressed", String(Math.abs(Number(button.dataset.speed) - video.playbackRate) < 1e-9));
    }
    const t = video.currentTime;
    for (const sentence of this.sentences) {
      const start = Number(sentence.dataset.start);
      const end = sentence.dataset.end === undefined ? start : Number(sentence.dataset.end);
      sentence.classList.toggle("is-current", t >= start && t < end);
    }
  }

  handleKey(event) {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey || isTyping(event.target)) return;
    const onControl = event.target instanceof Element && event.target.closest("button, a, summary");
    const actions = {
      " ": () => this.toggle(),
      k: () => this.toggle(),
      K: () => this.toggle(),
      j: () => this.jump(-JUMP_SECONDS),
      J: () => this.jump(-JUMP_SECONDS),
      l: () => this.jump(JUMP_SECONDS),
      L: () => this.jump(JUMP_SECONDS),
      ",": () => this.stepFrame(-1),
      ".": () => this.stepFrame(1),
      "[": () => this.changeSpeed(-1),
      "]": () => this.changeSpeed(1),
    };
    // Space on a focused button or link activates it, as usual; the shortcut is for the page itself.
    if (event.key === " " && onControl) return;
    const action = actions[event.key];
    if (!action) return;
    event.preventDefault();
    action();
  }
}

function youtubeSeek(iframe, seconds) {
  const url = new URL(iframe.src);
  url.searchParams.set("start", String(Math.floor(seconds)));
  url.searchParams.set("autoplay", "1");
  iframe.src = url.toString();
}

function init() {
  const root = document.querySelector("[data-player]");
  const player = root && root.querySelector("video") ? new Player(root) : null;
  const embed = document.querySelector("iframe[data-youtube-id]");
  if (player) {
    document.addEventListener("keydown", (event) => player.handleKey(event));
    window.captionEvalPlayer = player;
  }
  document.addEventListener("click", (event) => {
    const link = event.target.closest("[data-seek]");
    if (!link) return;
    const seconds = Number(link.dataset.seek);
    if (!Number.isFinite(seconds)) return;
    if (player) {
      event.preventDefault();
      player.seek(seconds);
      player.play();
    } else if (embed) {
      event.preventDefault();
      youtubeSeek(embed, seconds);
    }
  });
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
else init();
