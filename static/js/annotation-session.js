// CaptionEval: what every annotation page does around its own answer state, in one place. Written for the
// judgment-task page (static/js/task-annotate.js); the factuality page keeps its own copy until it moves here.
//
// - time on the page (only while it is visible), and whether the video was played;
// - drafts: saved 1.2 s after a change, every minute and when the tab is hidden; never after submitting began;
// - submitting exactly once: one UUID per answer (a retry or a double click of the same answer reuses it),
//   one request in flight at a time, and nothing else (no draft) sent once the server stored the answer.
//
// Requests carry the CSRF token and, for crowd participants without an account, the participant token.

export function uuid4() {
  if (window.crypto && crypto.randomUUID) return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export const DRAFT_DELAY_MS = 1200;

export class AnnotationSession {
  // options: {draftUrl, submitUrl, csrfToken: () => string, participantToken, askNext, initial: {time_spent,
  //           video_played}, editable, getState: () => answer, onStatus: (text) => void, video}
  // askNext: the submit asks the server to hand out the next assignment ("next": true); a stored answer then
  // carries the page to open in body.next
  constructor(options) {
    this.options = options;
    this.editable = Boolean(options.editable);
    this.finished = false; // the server stored the answer: nothing more is sent from this page
    this.videoPlayed = Boolean(options.initial && options.initial.video_played);
    this.spentMs = (Number(options.initial && options.initial.time_spent) || 0) * 1000;
    this.visibleSince = document.visibilityState === "visible" ? performance.now() : null;
    this.draftTimer = null;
    this.lastSaved = null;
    this.pending = null; // {uuid, answer}: the answer being submitted (a retry of the same answer keeps its UUID)
    this.inFlight = false;
    document.addEventListener("visibilitychange", () => {
      if (document.visibilityState === "visible") {
        this.visibleSince = performance.now();
      } else {
        if (this.visibleSince !== null) this.spentMs += performance.now() - this.visibleSince;
        this.visibleSince = null;
        this.saveDraft({keepalive: true});
      }
    });
    if (options.video) {
      options.video.addEventListener("play", () => {
        if (!this.videoPlayed) {
          this.videoPlayed = true;
          this.scheduleDraft();
        }
      });
    }
    setInterval(() => {
      if (document.visibilityState === "visible") this.saveDraft({keepalive: true});
    }, 60000);
  }

  timeSpent() {
    const running = this.visibleSince === null ? 0 : performance.now() - this.visibleSince;
    return Math.round((this.spentMs + running) / 100) / 10;
  }

  headers() {
    const headers = {"Content-Type": "application/json", "X-CSRFToken": this.options.csrfToken()};
    if (this.options.participantToken) headers["X-Participant-Token"] = this.options.participantToken;
    return headers;
  }

  status(text) {
    if (this.options.onStatus) this.options.onStatus(text);
  }

  canSave() {
    return this.editable && !this.finished && !this.inFlight;
  }

  scheduleDraft() {
    if (!this.canSave()) return;
    clearTimeout(this.draftTimer);
    this.status("Unsaved changes");
    this.draftTimer = setTimeout(() => this.saveDraft(), DRAFT_DELAY_MS);
  }

  async saveDraft({keepalive = false} = {}) {
    if (!this.canSave()) return;
    clearTimeout(this.draftTimer);
    const body = JSON.stringify({answer: this.options.getState(), time_spent: this.timeSpent(),
      video_played: this.videoPlayed});
    if (body === this.lastSaved && !keepalive) return;
    try {
      const response = await fetch(this.options.draftUrl, {method: "PUT", keepalive, credentials: "same-origin",
        headers: this.headers(), body});
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      this.lastSaved = body;
      const time = new Date().toLocaleTimeString([], {hour: "2-digit", minute: "2-digit", second: "2-digit"});
      if (!this.finished && !this.inFlight) this.status(`Draft saved at ${time}`);
    } catch (error) {
      if (this.finished) return;
      this.status("The draft could not be saved; it will be tried again.");
      this.draftTimer = setTimeout(() => this.saveDraft(), 10 * DRAFT_DELAY_MS);
    }
  }

  // Resolves to {ok, status, body}; {busy: true} when a submit is already on its way (a double click).
  async submit(confirm) {
    if (!this.editable || this.finished) return {ok: false, finished: this.finished};
    if (this.inFlight) return {busy: true};
    const answer = JSON.stringify(this.options.getState());
    if (!this.pending || this.pending.answer !== answer) this.pending = {uuid: uuid4(), answer};
    this.inFlight = true;
    clearTimeout(this.draftTimer);
    try {
      const response = await fetch(this.options.submitUrl, {method: "POST", credentials: "same-origin",
        headers: this.headers(), body: JSON.stringify({submission_uuid: this.pending.uuid, answer: JSON.parse(answer),
          confirm: Boolean(confirm), time_spent: this.timeSpent(), video_played: this.videoPlayed,
          next: Boolean(this.options.askNext)})});
      const body = await response.json().catch(() => ({}));
      if (response.ok) this.finished = true;
      return {ok: response.ok, status: response.status, body};
    } catch (error) {
      return {ok: false, status: 0, body: {}, offline: true};
    } finally {
      this.inFlight = false;
    }
  }
}
