// CaptionEval: what every annotation page does around its own answer state, in one place. Written for the
// judgment-task page (static/js/task-annotate.js); the factuality page keeps its own copy until it moves here.
//
// - time on the page (only while it is visible), and whether the video was played;
// - drafts: saved 1.2 s after a change, every minute and when the tab is hidden; never after submitting began;
//   never by a page that has changed nothing since it loaded (DraftKeeper below: a reload cannot put back what
//   it rendered over a newer draft), and the latest answer kept in the tab until the server acknowledged it;
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
const KEPT_SENDS = 20; // unacknowledged saves a tab remembers (each reload of a busy page adds one)

// The answer a page has not yet had acknowledged, kept in the tab (sessionStorage survives a reload, and is the
// tab's own: no other tab or device reads it) so that a reload never loses it. A reload races the draft the old
// page sends on leaving (a keepalive PUT): when the new page's GET wins, the server renders an older draft.
//
// - `changed`: the page changed something since it loaded (or restored a kept answer). A page that did not
//   sends no draft at all, so a reloaded page can never send back what it rendered over a newer draft.
// - the copy in the tab: {answer, time_spent, video_played, ..., version, basedOn, sent}. `version` is the
//   server's version (answers.draft_version: the time the server saved it, by the server's clock) of the latest
//   draft this tab knows the server holds: the one rendered, then each acknowledged save's. `sent` lists the
//   answers sent and not yet acknowledged. On load (`takeNewer`) the copy wins when the server's draft is one this
//   tab knows: the same version (nothing was saved since), or one of the answers it sent (its last save landed
//   first); then the copy is this tab's later work. Any other draft was saved by someone else after this tab last
//   heard from the server (another tab or device): the server's stands and the copy is dropped. Same for a copy
//   made before the current submission (`basedOn`). No client clock is compared.
// - the copy is removed once the server acknowledged the answer it holds, or stored a submit.
export class DraftKeeper {
  constructor({key, version = null, basedOn = null}) {
    this.key = `captioneval:draft:${key}`;
    this.version = version;
    this.basedOn = basedOn;
    this.changed = false;
    this.latest = null; // the draft as the page last noted it: {answer: JSON text, ...other fields}
    this.sent = []; // [{seq, answer}] sent, not yet acknowledged
    this.seq = 0;
    this.acked = 0;
  }

  read() {
    try {
      const text = sessionStorage.getItem(this.key);
      const record = text ? JSON.parse(text) : null;
      return record && typeof record === "object" && typeof record.answer === "string" ? record : null;
    } catch (error) {
      return null;
    }
  }

  write() {
    if (!this.latest) return;
    try {
      sessionStorage.setItem(this.key, JSON.stringify({...this.latest, version: this.version, basedOn: this.basedOn,
        sent: this.sent.map((s) => s.answer)}));
    } catch (error) {
      // no storage (private mode, quota): the page still saves drafts as before
    }
  }

  forget() {
    this.latest = null;
    try {
      sessionStorage.removeItem(this.key);
    } catch (error) {
      // nothing kept
    }
  }

  // rendered: the answer the server rendered, as JSON text in the page's own shape (after the page's restore).
  // Returns the kept draft ({answer: object, time_spent, ...}) when it is newer, else null (the copy is dropped).
  takeNewer(rendered) {
    const record = this.read();
    if (!record) return null;
    const sent = Array.isArray(record.sent) ? record.sent.filter((a) => typeof a === "string") : [];
    const known = record.version === this.version || sent.includes(rendered);
    if (!known || record.basedOn !== this.basedOn || record.answer === rendered) {
      this.forget();
      return null;
    }
    let answer;
    try {
      answer = JSON.parse(record.answer);
    } catch (error) {
      this.forget();
      return null;
    }
    const {version, basedOn, sent: _, ...draft} = record;
    this.latest = draft;
    this.sent = sent.slice(-KEPT_SENDS).map((a) => ({seq: 0, answer: a}));
    this.changed = true;
    this.write();
    return {...draft, answer};
  }

  // The page changed: keep its draft ({answer, time_spent, ...}) in the tab at once.
  note(draft) {
    this.changed = true;
    this.latest = {...draft, answer: JSON.stringify(draft.answer)};
    this.write();
  }

  // A save of `draft` is being sent: returns its number for `acknowledged`.
  sending(draft) {
    this.latest = {...draft, answer: JSON.stringify(draft.answer)};
    this.seq += 1;
    this.sent.push({seq: this.seq, answer: this.latest.answer});
    this.sent = this.sent.slice(-KEPT_SENDS);
    this.write();
    return this.seq;
  }

  // The server stored save `seq` as `version`. Saves acknowledged out of order do not move the version back.
  acknowledged(seq, version) {
    if (seq <= this.acked || typeof version !== "string") return;
    const answer = (this.sent.find((s) => s.seq === seq) || {}).answer;
    this.acked = seq;
    this.version = version;
    this.sent = this.sent.filter((s) => s.seq > seq);
    if (!this.sent.length && this.latest && this.latest.answer === answer) this.forget();
    else this.write();
  }
}

export class AnnotationSession {
  // options: {draftUrl, submitUrl, csrfToken: () => string, participantToken, askNext, initial: {time_spent,
  //           video_played}, editable, getState: () => answer, onStatus: (text) => void, video,
  //           keeper: a DraftKeeper (made from draftUrl when not given)}
  // askNext: the submit asks the server to hand out the next assignment ("next": true); a stored answer then
  // carries the page to open in body.next
  constructor(options) {
    this.options = options;
    this.editable = Boolean(options.editable);
    this.keeper = options.keeper || new DraftKeeper({key: options.draftUrl});
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

  draft() {
    return {answer: this.options.getState(), time_spent: this.timeSpent(), video_played: this.videoPlayed};
  }

  // Called on every change: the draft is kept in the tab at once and sent 1.2 s later.
  scheduleDraft() {
    if (!this.canSave()) return;
    this.keeper.note(this.draft());
    clearTimeout(this.draftTimer);
    this.status("Unsaved changes");
    this.draftTimer = setTimeout(() => this.saveDraft(), DRAFT_DELAY_MS);
  }

  // Nothing is sent by a page that changed nothing since it loaded (the keepalive saves included): what it would
  // send is what the server rendered, maybe older than a draft that landed since.
  async saveDraft({keepalive = false} = {}) {
    if (!this.canSave() || !this.keeper.changed) return;
    clearTimeout(this.draftTimer);
    const draft = this.draft();
    const body = JSON.stringify(draft);
    if (body === this.lastSaved && !keepalive) return;
    const seq = this.keeper.sending(draft);
    try {
      const response = await fetch(this.options.draftUrl, {method: "PUT", keepalive, credentials: "same-origin",
        headers: this.headers(), body});
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const result = await response.json().catch(() => ({}));
      this.keeper.acknowledged(seq, result.saved_at);
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
      if (response.ok) {
        this.finished = true;
        this.keeper.forget();
      }
      return {ok: response.ok, status: response.status, body};
    } catch (error) {
      return {ok: false, status: 0, body: {}, offline: true};
    } finally {
      this.inFlight = false;
    }
  }
}
