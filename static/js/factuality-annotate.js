// CaptionEval annotation page (factuality and rating projects). Markup: templates/factuality/annotate.html;
// configuration and starting state in the #annotation-config JSON. The player is static/js/video-player.js.
//
// State: {paragraphs: [{score, rationale, sentences: [{error: 0|1, spans: [[start, end]]}]}]}, in the order the
// paragraphs are shown. Every change re-renders the affected paragraph and schedules a draft save (PUT to the
// draft endpoint); submitting POSTs the answer with a client UUID (kept for retries of the same answer), the
// time spent on the page and the real time the video played (playback-clock.js: seeking does not count). A
// video that was never played needs the annotator's confirmation. Once a submit starts, no draft is saved any
// more (drafts also name the submission the page started from, so the server refuses a late one), the submit
// button keeps its width and "Save draft and leave" is inert, so a double click cannot land on it. A page that
// changed nothing since it loaded sends no draft, and the latest answer is kept in the tab until the server
// acknowledged it (annotation-session.js: DraftKeeper), so a reload that overtakes the last save loses nothing.
import "./video-player.js";
import {csrfToken, typing} from "./annotation-page.js";
import {DraftKeeper, uuid4} from "./annotation-session.js";
import {SpanMarker, addSpan, spanAt} from "./factuality-spans.js";
import {PlaybackClock} from "./playback-clock.js";
import {showProblems as renderProblems} from "./submit-problems.js";

const config = JSON.parse(document.getElementById("annotation-config").textContent);
const form = document.getElementById("annotation");
const problemsBox = document.getElementById("problems");
const confirmButton = document.getElementById("confirm-submit");
const submitButton = document.getElementById("submit");
const saveStatus = document.getElementById("save-status");
const dialog = document.getElementById("clear-dialog");
const factuality = config.kind === "factuality";
const paragraphs = Array.from(document.querySelectorAll(".fact-paragraph"));
const DRAFT_DELAY_MS = 1200;

// --- state ---------------------------------------------------------------------------------------------------
function emptyState() {
  return {paragraphs: config.paragraphs.map((p) => ({
    score: null, rationale: "", sentences: p.sentences.map(() => ({error: 0, spans: []})),
  }))};
}

function restore(answer) {
  const state = emptyState();
  const given = answer && Array.isArray(answer.paragraphs) ? answer.paragraphs : [];
  state.paragraphs.forEach((paragraph, i) => {
    const saved = given[i];
    if (!saved || typeof saved !== "object") return;
    if (Number.isInteger(saved.score)) paragraph.score = saved.score;
    if (typeof saved.rationale === "string") paragraph.rationale = saved.rationale;
    (saved.sentences || []).forEach((sentence, j) => {
      if (!paragraph.sentences[j] || !sentence) return;
      paragraph.sentences[j].error = sentence.error ? 1 : 0;
      paragraph.sentences[j].spans = Array.isArray(sentence.spans) ? sentence.spans.map(([s, e]) => [s, e]) : [];
    });
  });
  return state;
}

// The answer this tab kept replaces the rendered one when it is newer: a reload that overtook the old page's
// last draft save must not lose it (DraftKeeper says when).
const keeper = new DraftKeeper({key: config.draftUrl, version: config.draftVersion, basedOn: config.basedOn});
const rendered = config.state || {};
const kept = config.open ? keeper.takeNewer(JSON.stringify(restore(rendered.answer))) : null;
const initial = kept ? {...kept, source: "kept"} : rendered;
let state = restore(initial.answer);
const leaveLink = document.getElementById("leave");
let submitting = false; // a submit is under way or done: no more drafts, no leaving by the link
const video = document.querySelector("#player video");
const clock = new PlaybackClock({onChange: () => {
  if (!videoPlayed) { videoPlayed = true; if (!problemsBox.hidden) showProblems(clientProblems(), true); }
  scheduleDraft();
}});
clock.seconds = Number(initial.watched_seconds) || 0;
// With a video element the page knows whether it played; embeds and pages without a video cannot tell (null).
let videoPlayed = video ? Boolean(initial.video_played) || clock.seconds > 0 : null;
let spentMs = (Number(initial.time_spent) || 0) * 1000;
let visibleSince = document.visibilityState === "visible" ? performance.now() : null;
let current = {paragraph: 0, sentence: 0};
let editable = config.open;

function timeSpent() {
  const running = visibleSince === null ? 0 : performance.now() - visibleSince;
  return Math.round((spentMs + running) / 100) / 10;
}

document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "visible") {
    visibleSince = performance.now();
  } else {
    if (visibleSince !== null) spentMs += performance.now() - visibleSince;
    visibleSince = null;
    saveDraft({keepalive: true});
  }
});

if (video) clock.attach(video);

// --- rendering -----------------------------------------------------------------------------------------------
function paragraphStatus(p, index) {
  const missing = [];
  if (p.score === null) missing.push("no score yet");
  const flagged = p.sentences.filter((s) => s.error).length;
  const bare = p.sentences.filter((s) => s.error && !s.spans.length).length;
  if (bare) missing.push(`${bare} flagged sentence${bare > 1 ? "s" : ""} without marked words`);
  if (config.rationale === "required" && !p.rationale.trim()) missing.push("no reason given");
  if (missing.length) return {done: false, text: missing.join(" · ")};
  return {done: true, text: factuality ? `done · ${flagged} flagged` : "done"};
}

function render(index) {
  const p = state.paragraphs[index];
  const root = paragraphs[index];
  root.querySelectorAll(".fact-sentence").forEach((item, j) => {
    const sentence = p.sentences[j];
    const flag = item.querySelector('[data-action="flag"]');
    flag.setAttribute("aria-pressed", String(Boolean(sentence.error)));
    flag.querySelector('[data-role="flag-text"]').textContent = sentence.error ? "Error" : "Error?";
    item.classList.toggle("fact-sentence--error", Boolean(sentence.error));
    const marked = new Set();
    sentence.spans.forEach(([s, e]) => { for (let t = s; t < e; t += 1) marked.add(t); });
    item.querySelectorAll(".tok").forEach((token) => {
      const t = Number(token.dataset.t);
      token.classList.toggle("tok--marked", marked.has(t));
      token.classList.toggle("tok--span-start", sentence.spans.some(([s]) => s === t));
      token.classList.toggle("tok--span-end", sentence.spans.some(([, e]) => e - 1 === t));
    });
    const list = item.querySelector('[data-role="spans"]');
    list.replaceChildren(...sentence.spans.map(([s, e], k) => {
      const words = Array.from(item.querySelectorAll(".tok")).slice(s, e).map((x) => x.textContent).join(" ");
      const chip = document.createElement("li");
      chip.className = "fact-span";
      const text = document.createElement("span");
      text.textContent = words;
      const remove = document.createElement("button");
      remove.type = "button";
      remove.className = "fact-span__remove";
      remove.dataset.action = "remove-span";
      remove.dataset.span = String(k);
      remove.disabled = !editable;
      remove.setAttribute("aria-label", `Remove marked words “${words}”`);
      remove.textContent = "×";
      chip.append(text, remove);
      return chip;
    }));
  });
  root.querySelectorAll('input[type="radio"]').forEach((input) => {
    input.checked = Number(input.value) === p.score;
    input.disabled = !editable;
  });
  const rationale = root.querySelector("textarea");
  if (rationale && rationale.value !== p.rationale) rationale.value = p.rationale;
  if (rationale) rationale.disabled = !editable;
  root.querySelectorAll('[data-action="flag"]').forEach((b) => { b.disabled = !editable; });
  const status = paragraphStatus(p, index);
  const label = root.querySelector('[data-role="status"]');
  label.textContent = status.text;
  root.classList.toggle("fact-paragraph--done", status.done);
}

function renderAll() {
  state.paragraphs.forEach((_, i) => render(i));
  setCurrent(current.paragraph, current.sentence, false);
}

function setCurrent(paragraph, sentence = 0, scroll = false) {
  current = {paragraph, sentence};
  paragraphs.forEach((root, i) => root.classList.toggle("is-current", i === paragraph));
  document.querySelectorAll(".fact-sentence.is-current").forEach((el) => el.classList.remove("is-current"));
  const item = paragraphs[paragraph] && paragraphs[paragraph].querySelectorAll(".fact-sentence")[sentence];
  if (item) item.classList.add("is-current");
  if (scroll && paragraphs[paragraph]) paragraphs[paragraph].scrollIntoView({block: "nearest", behavior: "smooth"});
}

function locate(element) {
  const root = element.closest(".fact-paragraph");
  const item = element.closest(".fact-sentence");
  return {paragraph: root ? Number(root.dataset.paragraph) : null, sentence: item ? Number(item.dataset.sentence) : 0};
}

// --- changes -------------------------------------------------------------------------------------------------
function changed(index) {
  render(index);
  scheduleDraft();
  if (!problemsBox.hidden) showProblems(clientProblems(), false);
}

function setFlag(p, s, error) {
  const sentence = state.paragraphs[p].sentences[s];
  sentence.error = error ? 1 : 0;
  if (!error) sentence.spans = [];
  changed(p);
}

function askStillErroneous(p, s) {
  const text = dialog.querySelector('[data-role="text"]');
  text.textContent = `No words of paragraph ${config.paragraphs[p].letter}, sentence ${s + 1} are marked any more. `
    + "Is the sentence still erroneous?";
  dialog.returnValue = "";
  const focusBack = document.activeElement;
  dialog.addEventListener("close", function onClose() {
    dialog.removeEventListener("close", onClose);
    if (dialog.returnValue === "unflag") setFlag(p, s, false);
    if (focusBack && focusBack.isConnected) focusBack.focus();
  });
  dialog.showModal();
}

function removeSpan(p, s, k) {
  const sentence = state.paragraphs[p].sentences[s];
  sentence.spans.splice(k, 1);
  changed(p);
  if (!sentence.spans.length && sentence.error) askStillErroneous(p, s);
}

function setScore(p, value) {
  state.paragraphs[p].score = value;
  changed(p);
}

if (factuality) {
  new SpanMarker(form, {
    isEnabled: () => editable,
    onFocus: (group) => { const at = locate(group); setCurrent(at.paragraph, at.sentence); },
    onMark: (group, start, end) => {
      const {paragraph, sentence} = locate(group);
      const target = state.paragraphs[paragraph].sentences[sentence];
      target.spans = addSpan(target.spans, start, end);
      target.error = 1; // marking words flags the sentence
      setCurrent(paragraph, sentence);
      changed(paragraph);
    },
    onRemoveAt: (group, index) => {
      const {paragraph, sentence} = locate(group);
      const k = spanAt(state.paragraphs[paragraph].sentences[sentence].spans, index);
      if (k >= 0) removeSpan(paragraph, sentence, k);
    },
  });
}

form.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-action]");
  if (!button || !editable) return;
  const {paragraph, sentence} = locate(button);
  setCurrent(paragraph, sentence);
  if (button.dataset.action === "flag") {
    setFlag(paragraph, sentence, !state.paragraphs[paragraph].sentences[sentence].error);
  } else if (button.dataset.action === "remove-span") {
    const item = button.closest(".fact-sentence");
    removeSpan(paragraph, sentence, Number(button.dataset.span));
    const next = item.querySelector(".fact-span__remove") || item.querySelector('.tok[tabindex="0"]');
    if (next && !dialog.open) next.focus();
  }
});

form.addEventListener("change", (event) => {
  const input = event.target;
  if (input.type === "radio") {
    const {paragraph} = locate(input);
    setCurrent(paragraph);
    setScore(paragraph, Number(input.value));
  }
});

form.addEventListener("input", (event) => {
  if (event.target.tagName === "TEXTAREA") {
    const {paragraph} = locate(event.target);
    state.paragraphs[paragraph].rationale = event.target.value;
    scheduleDraft();
    render(paragraph);
  }
});

form.addEventListener("focusin", (event) => {
  const {paragraph, sentence} = locate(event.target);
  if (paragraph !== null && (paragraph !== current.paragraph || sentence !== current.sentence)) {
    setCurrent(paragraph, sentence);
  }
});

// --- keyboard shortcuts --------------------------------------------------------------------------------------
document.addEventListener("keydown", (event) => {
  if (event.defaultPrevented || dialog.open) return;
  if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
    event.preventDefault();
    attemptSubmit(false);
    return;
  }
  if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
  const values = config.scale.map(([value]) => value);
  if (/^[0-9]$/.test(event.key) && values.includes(Number(event.key)) && editable) {
    event.preventDefault();
    setScore(current.paragraph, Number(event.key));
    const radio = paragraphs[current.paragraph].querySelector(`input[type="radio"][value="${event.key}"]`);
    if (radio && document.activeElement && document.activeElement.type === "radio") radio.focus();
  } else if (event.key === "n" || event.key === "p") {
    event.preventDefault();
    const next = Math.max(0, Math.min(paragraphs.length - 1, current.paragraph + (event.key === "n" ? 1 : -1)));
    setCurrent(next, 0, true);
    const focusable = paragraphs[next].querySelector('[data-action="flag"], input[type="radio"]');
    if (focusable) focusable.focus({preventScroll: true});
  } else if (event.key === "e" && factuality && editable) {
    event.preventDefault();
    const sentence = state.paragraphs[current.paragraph].sentences[current.sentence];
    if (sentence) setFlag(current.paragraph, current.sentence, !sentence.error);
  }
});

// --- drafts --------------------------------------------------------------------------------------------------
let draftTimer = null;
let lastSaved = null;

function draftBody() {
  return {answer: state, time_spent: timeSpent(), video_played: Boolean(videoPlayed),
    watched_seconds: watchedSeconds(), based_on: config.basedOn};
}

// Called on every change: the draft is kept in the tab at once and sent 1.2 s later.
function scheduleDraft() {
  if (!editable || submitting) return;
  keeper.note(draftBody());
  clearTimeout(draftTimer);
  saveStatus.textContent = "Unsaved changes";
  draftTimer = setTimeout(() => saveDraft(), DRAFT_DELAY_MS);
}

function watchedSeconds() {
  return video ? Math.round(clock.seconds * 1000) / 1000 : null;
}

// Nothing is sent by a page that changed nothing since it loaded (the keepalive saves included): what it would
// send is what the server rendered, maybe older than a draft that landed since.
async function saveDraft({keepalive = false} = {}) {
  if (!editable || submitting || !keeper.changed) return;
  clearTimeout(draftTimer);
  const draft = draftBody();
  const body = JSON.stringify(draft);
  if (body === lastSaved && !keepalive) return;
  const seq = keeper.sending(draft);
  try {
    const response = await fetch(config.draftUrl, {
      method: "PUT", keepalive, credentials: "same-origin",
      headers: {"Content-Type": "application/json", "X-CSRFToken": csrfToken()}, body,
    });
    if (response.status === 409) { // closed, or submitted elsewhere meanwhile: nothing to retry
      const detail = await response.json().catch(() => ({}));
      saveStatus.textContent = detail.detail || "The draft was not saved.";
      return;
    }
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    const result = await response.json().catch(() => ({}));
    keeper.acknowledged(seq, result.saved_at);
    lastSaved = body;
    const time = new Date().toLocaleTimeString([], {hour: "2-digit", minute: "2-digit", second: "2-digit"});
    saveStatus.textContent = `Draft saved at ${time}`;
  } catch (error) {
    if (submitting) return;
    saveStatus.textContent = "The draft could not be saved; it will be tried again.";
    draftTimer = setTimeout(() => saveDraft(), 10 * DRAFT_DELAY_MS);
  }
}

setInterval(() => {
  if (editable && !submitting && document.visibilityState === "visible") saveDraft({keepalive: true});
}, 60000);

// --- submitting ----------------------------------------------------------------------------------------------
function clientProblems() {
  const problems = [];
  if (videoPlayed === false) {
    problems.push({paragraph: null, sentence: null, code: "video_not_played",
      message: "You have not played the video: please watch it before judging the captions."});
  }
  state.paragraphs.forEach((p, i) => {
    const name = `${factuality ? "Paragraph" : "Caption"} ${config.paragraphs[i].letter}`;
    if (p.score === null) problems.push({paragraph: i, sentence: null, message: `${name} has no score yet.`});
    p.sentences.forEach((s, j) => {
      if (s.error && !s.spans.length) {
        problems.push({paragraph: i, sentence: j,
          message: `${name}, sentence ${j + 1} is flagged as erroneous but no words are marked.`});
      }
    });
  });
  return problems;
}

function showProblems(problems, canConfirm, title) {
  renderProblems(problemsBox, confirmButton, problems, canConfirm, title, problemLink);
}

function problemLink(problem) {
  const letter = problem.paragraph !== null && problem.paragraph !== undefined
    ? config.paragraphs[problem.paragraph].letter : null;
  const href = letter ? `#paragraph-${letter}` : (problem.code === "video_not_played" ? "#player" : "#annotation");
  return {href, go: () => {
    if (problem.code === "video_not_played") {
      const play = document.querySelector('#player [data-action="toggle"]');
      document.getElementById("player").scrollIntoView({block: "nearest"});
      if (play) play.focus();
      return;
    }
    if (problem.paragraph === null || problem.paragraph === undefined) return;
    setCurrent(problem.paragraph, problem.sentence || 0, true);
    const root = paragraphs[problem.paragraph];
    const target = problem.sentence !== null && problem.sentence !== undefined
      ? root.querySelectorAll(".fact-sentence")[problem.sentence].querySelector(".tok")
      : root.querySelector('input[type="radio"]');
    if (target) target.focus({preventScroll: true});
  }};
}

let pending = null; // {uuid, body}: the submission being sent (a retry of the same answer keeps its UUID)

// After a submit the page goes where #next-form says. When that form hands out the next video (a POST to the
// project's Start), the submit asks the server to do it at once ("next": true) and answers the page to open in
// `next`: one request instead of three. Without `next` (a crowd link's end page, a failed hand-out) the form
// is posted as before.
const nextForm = document.getElementById("next-form");
const handsOutNext = nextForm.method === "post";

function goNext(result) {
  if (handsOutNext && typeof result.next === "string" && result.next.startsWith("/")) location.assign(result.next);
  else nextForm.submit();
}

function setSubmitting(on, label) {
  submitting = on;
  if (on) submitButton.style.minWidth = `${submitButton.offsetWidth}px`; // the row must not move under a click
  submitButton.disabled = on;
  confirmButton.disabled = on;
  submitButton.textContent = label;
  leaveLink.classList.toggle("is-inert", on);
  if (on) leaveLink.setAttribute("aria-disabled", "true");
  else leaveLink.removeAttribute("aria-disabled");
}

leaveLink.addEventListener("click", (event) => { if (submitting) event.preventDefault(); });

async function attemptSubmit(confirm) {
  if (!editable || submitting) return;
  const problems = clientProblems();
  if (problems.length && !confirm) {
    showProblems(problems, true);
    problemsBox.querySelector("a, button:not([hidden])").focus();
    return;
  }
  const answer = JSON.stringify(state);
  if (!pending || pending.answer !== answer) pending = {uuid: uuid4(), answer};
  clearTimeout(draftTimer);
  setSubmitting(true, "Submitting…");
  const body = JSON.stringify({submission_uuid: pending.uuid, answer: state, confirm: Boolean(confirm),
    time_spent: timeSpent(), video_played: videoPlayed, watched_seconds: watchedSeconds(), next: handsOutNext});
  try {
    const response = await fetch(config.submitUrl, {
      method: "POST", credentials: "same-origin", keepalive: body.length < 60000, // survives leaving the page
      headers: {"Content-Type": "application/json", "X-CSRFToken": csrfToken()}, body,
    });
    const result = await response.json().catch(() => ({}));
    if (response.ok) {
      editable = false;
      keeper.forget();
      saveStatus.textContent = "Submitted";
      showProblems([], false);
      submitButton.textContent = "Submitted: opening the next video…";
      goNext(result);
      return;
    }
    if (response.status === 409 && result.needs_confirmation) {
      showProblems(result.problems || [], true);
    } else {
      showProblems(result.problems && result.problems.length ? result.problems
        : [{paragraph: null, message: result.detail || `The server refused the answer (HTTP ${response.status}).`}],
      false, "Not submitted:");
    }
  } catch (error) {
    showProblems([{paragraph: null, message: "No connection to the server: your answer is kept; try again."}],
      false, "Not submitted:");
  }
  setSubmitting(false, "Submit and go to the next video");
  if (keeper.changed) scheduleDraft();
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  attemptSubmit(false);
});
confirmButton.addEventListener("click", () => attemptSubmit(true));

// --- start ---------------------------------------------------------------------------------------------------
const live = document.createElement("p");
live.id = "span-live";
live.className = "visually-hidden";
live.setAttribute("aria-live", "polite");
document.body.append(live);
if (initial.source === "draft") saveStatus.textContent = "Draft restored";
renderAll();
if (kept) {
  saveStatus.textContent = "Your latest changes were restored";
  saveDraft();
}
window.captionEvalAnnotation = {state: () => state, timeSpent, videoPlayed: () => videoPlayed,
  watchedSeconds: () => clock.seconds};
