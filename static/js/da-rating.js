// CaptionEval Direct Assessment rating page: one item at a time, fetched and submitted as JSON, no page reload.
// Markup: templates/assessment/rate.html ([data-da-rating]); the initial state is in <script id="da-state">.
//
// Rules: the slider starts unset (no thumb, no value shown); "Submit" stays disabled until the video has really
// played for the campaign's watch gate (default 90 % of the clip, capped; playback time counted by
// playback-clock.js, so seeking to the end unlocks nothing) and the slider has been moved. Every item gets a fresh
// client submission UUID; a retry (network error, double click) sends the same UUID, so the server stores the
// score once and answers the stored judgment. Keyboard: p play/pause, arrows / PageUp / PageDown move the slider,
// Enter submits.
import {PlaybackClock, requiredSeconds} from "./playback-clock.js";

const RETRIES = 3;

export function newUuid() {
  if (window.crypto && typeof window.crypto.randomUUID === "function") return window.crypto.randomUUID();
  const bytes = window.crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}


const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

export class Rating {
  constructor(root, state) {
    this.root = root;
    this.submitUrl = root.dataset.submitUrl;
    this.csrfToken = root.dataset.csrfToken || "";
    this.finishUrl = root.dataset.finishUrl || ""; // crowd work: the crowd's end page (code, redirect or submit)
    const role = (name) => root.querySelector(`[data-role="${name}"]`);
    this.el = {
      progress: role("progress"), bar: role("progress-bar"), task: role("task"), statement: role("statement"),
      stage: role("stage"), caption: role("caption"), slider: role("slider"), value: role("value"),
      submit: role("submit"), hint: role("hint"), error: role("error"), done: role("done"), code: role("code"),
      playHint: role("play-hint"),
    };
    this.item = null;
    this.busy = false;
    this.onMessage = null;
    this.bind();
    this.render(state);
  }

  bind() {
    const slider = this.el.slider;
    slider.addEventListener("input", () => this.markMoved());
    slider.addEventListener("pointerdown", () => this.markMoved());
    this.el.submit.addEventListener("click", () => this.submit());
    document.addEventListener("keydown", (event) => this.onKey(event));
  }

  onKey(event) {
    if (event.altKey || event.ctrlKey || event.metaKey || !this.item) return;
    const target = event.target;
    const onSlider = target === this.el.slider;
    if (event.key === "Enter") {
      if (target instanceof HTMLButtonElement || target instanceof HTMLAnchorElement) return;
      event.preventDefault();
      this.submit();
      return;
    }
    if (event.key === "p" || event.key === "P") {
      event.preventDefault();
      this.togglePlay();
      return;
    }
    const steps = { ArrowLeft: -1, ArrowDown: -1, ArrowRight: 1, ArrowUp: 1, PageDown: -10, PageUp: 10 };
    if (!onSlider && event.key in steps && !(target instanceof HTMLVideoElement)) {
      event.preventDefault();
      const slider = this.el.slider;
      slider.value = String(Math.min(100, Math.max(0, Number(slider.value) + steps[event.key])));
      this.markMoved();
      slider.focus();
    }
  }

  togglePlay() {
    const video = this.el.stage.querySelector("video");
    if (!video) return;
    if (video.paused) video.play().catch(() => {});
    else video.pause();
  }

  render(state) {
    this.state = state;
    const done = state.complete ? state.total : state.done;
    this.el.bar.max = state.total;
    this.el.bar.value = done;
    this.el.bar.textContent = `${done} of ${state.total}`;
    if (state.complete) {
      this.el.progress.textContent = `Done: ${state.total} of ${state.total}`;
      this.teardownPlayer();
      this.item = null;
      this.el.task.hidden = true;
      this.el.done.hidden = false;
      if (this.finishUrl) {
        window.location.assign(this.finishUrl);
        return;
      }
      if (this.el.code) this.el.code.textContent = state.completion_code || "";
      return;
    }
    this.el.progress.textContent = `Item ${state.done + 1} of ${state.total}`;
    this.el.statement.textContent = state.statement;
    if (!this.item || this.item.id !== state.item.id) this.show(state.item);
  }

  show(item) {
    this.item = item;
    this.uuid = newUuid();
    this.shownAt = performance.now();
    this.played = false;
    this.clock = new PlaybackClock({onChange: () => this.checkWatched()});
    this.duration = NaN;
    this.ytPlaying = false;
    this.moved = false;
    this.showError("");
    this.el.caption.textContent = item.text;
    const slider = this.el.slider;
    slider.value = "50";
    slider.classList.add("is-unset");
    slider.setAttribute("aria-valuetext", "not set yet");
    this.el.value.textContent = "\u00a0";
    this.mountPlayer(item.video);
    this.update();
  }

  teardownPlayer() {
    if (this.onMessage) window.removeEventListener("message", this.onMessage);
    this.onMessage = null;
    const old = this.el.stage.querySelector("video");
    if (old) {
      old.pause();
      old.removeAttribute("src");
      old.load();
    }
    this.el.stage.replaceChildren();
  }

  mountPlayer(video) {
    this.teardownPlayer();
    this.el.stage.dataset.kind = video.kind;
    if (video.kind === "youtube") return this.mountYouTube(video.youtube_id);
    if (!video.url) {
      // nothing to play: the rule "has played" cannot apply
      const note = document.createElement("p");
      note.className = "notice notice--warning";
      note.textContent = "This item has no video; rate the text as it stands.";
      this.el.stage.append(note);
      this.played = true;
      return;
    }
    const element = document.createElement("video");
    element.className = "da-video";
    element.controls = true;
    element.preload = "auto";
    element.playsInline = true;
    element.src = video.url;
    this.clock.attach(element);
    element.addEventListener("durationchange", () => { this.duration = element.duration; this.update(); });
    element.addEventListener("error", () => this.showError("The video could not be loaded. Please reload the page."));
    this.el.stage.append(element);
  }

  mountYouTube(id) {
    // The embed reports its state by postMessage when asked ("listening"); no YouTube script is loaded here.
    const frame = document.createElement("iframe");
    frame.className = "da-embed";
    frame.title = "Video";
    frame.allow = "autoplay; encrypted-media; picture-in-picture";
    frame.referrerPolicy = "strict-origin-when-cross-origin";
    frame.src = `https://www.youtube-nocookie.com/embed/${encodeURIComponent(id)}?enablejsapi=1&rel=0&origin=${encodeURIComponent(window.location.origin)}`;
    frame.addEventListener("load", () => {
      frame.contentWindow.postMessage(JSON.stringify({ event: "listening", id: 1, channel: "widget" }), "*");
    });
    this.onMessage = (event) => {
      if (event.source !== frame.contentWindow || typeof event.data !== "string") return;
      let data;
      try { data = JSON.parse(event.data); } catch { return; }
      const info = data && data.info;
      if (!info || typeof info !== "object") return;
      if (typeof info.duration === "number") this.duration = info.duration;
      if (info.playerState !== undefined) this.ytPlaying = info.playerState === 1;
      if (typeof info.currentTime === "number") this.clock.observe(info.currentTime, Boolean(this.ytPlaying));
      else if (info.playerState !== undefined && !this.ytPlaying) this.clock.jump();
      this.checkWatched();
    };
    window.addEventListener("message", this.onMessage);
    this.el.stage.append(frame);
  }

  requiredSeconds() {
    const watch = this.state.watch || {};
    return requiredSeconds(this.duration, {fraction: watch.fraction, maxSeconds: watch.max_seconds,
      known: this.item ? this.item.watch_seconds : null});
  }

  checkWatched() {
    if (!this.played && this.clock.seconds >= this.requiredSeconds()) this.markPlayed();
    else this.update();
  }

  markPlayed() {
    if (this.played || !this.item) return;
    this.played = true;
    this.update();
  }

  markMoved() {
    if (!this.item) return;
    const slider = this.el.slider;
    this.moved = true;
    slider.classList.remove("is-unset");
    slider.setAttribute("aria-valuetext", `${slider.value} of 100`);
    this.el.value.textContent = slider.value;
    this.update();
  }

  ready() {
    return Boolean(this.item) && this.played && this.moved && !this.busy;
  }

  update() {
    this.el.submit.disabled = !this.ready();
    let hint = "";
    if (!this.played) {
      const needed = this.requiredSeconds();
      const seen = Math.min(this.clock ? this.clock.seconds : 0, needed);
      hint = seen > 0 ? `Keep watching: ${seen.toFixed(1)} of ${needed.toFixed(1)} s played.`
        : "Play the video to continue.";
    }
    else if (!this.moved) hint = "Move the slider to give your score.";
    this.el.hint.textContent = this.busy ? "Saving…" : hint;
    this.el.playHint.hidden = this.played;
  }

  showError(message) {
    this.el.error.textContent = message;
  }

  async submit() {
    if (!this.ready()) return;
    this.busy = true;
    this.update();
    const body = JSON.stringify({
      item: this.item.id,
      score: Number(this.el.slider.value),
      client_uuid: this.uuid,
      elapsed_ms: Math.round(performance.now() - this.shownAt),
      played: this.played,
      watched_seconds: Math.round(this.clock.seconds * 1000) / 1000,
    });
    let message = "Your score could not be saved. Please try again.";
    try {
      for (let attempt = 0; attempt <= RETRIES; attempt += 1) {
        let response;
        try {
          response = await fetch(this.submitUrl, {
            method: "POST",
            credentials: "same-origin",
            headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": this.csrfToken },
            body,
          });
        } catch (error) {
          await sleep(400 * 2 ** attempt); // network trouble: retry with the same submission id
          continue;
        }
        const data = await response.json().catch(() => ({}));
        if ((response.ok || response.status === 409) && data.state) {
          this.busy = false;
          this.render(data.state); // stored (or already stored): the next item
          if (this.item) this.el.slider.focus({ preventScroll: true });
          return;
        }
        if (response.status >= 500) {
          await sleep(400 * 2 ** attempt);
          continue;
        }
        message = (data && typeof data.detail === "string" && data.detail) || message;
        break;
      }
    } finally {
      this.busy = false;
      this.update();
    }
    this.showError(message);
  }
}

function start() {
  const root = document.querySelector("[data-da-rating]");
  const data = document.getElementById("da-state");
  if (!root || !data) return;
  // Answered to a POST (a crowd participant's Start): show the page's own address, so that a reload or a bookmark
  // is a GET of this page and not the POST again.
  const address = root.dataset.address;
  if (address && window.location.pathname !== address) window.history.replaceState(window.history.state, "", address);
  window.daRating = new Rating(root, JSON.parse(data.textContent));
  window.daRating.watchedSeconds = () => window.daRating.clock.seconds;
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
else start();
