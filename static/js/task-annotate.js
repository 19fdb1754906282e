// CaptionEval judgment-task annotation page. Markup: templates/judgment_tasks/annotate.html, built from the
// task definition; question configuration and starting state in the #annotation-config JSON. The player is
// static/js/video-player.js; drafts, time on page and the exactly-once submit are static/js/annotation-session.js.
//
// State: {question id: value}, as the server stores it: a Likert point or a choice value (or null); for a
// per-element question a list of those, one per row; for matching pairs [[left, right], ...] (0-based); text;
// a count. Every change re-renders the question and schedules a draft.
import "./video-player.js";
import {csrfToken, typing} from "./annotation-page.js";
import {AnnotationSession, DraftKeeper} from "./annotation-session.js";
import {showProblems as renderProblems} from "./submit-problems.js";

const config = JSON.parse(document.getElementById("annotation-config").textContent);
const form = document.getElementById("annotation");
const problemsBox = document.getElementById("problems");
const confirmButton = document.getElementById("confirm-submit");
const submitButton = document.getElementById("submit");
const saveStatus = document.getElementById("save-status");
const blocks = Array.from(document.querySelectorAll(".task-question"));
const questions = config.questions;
const SUBMIT_TEXT = submitButton.textContent;

// --- state ---------------------------------------------------------------------------------------------------
function emptyAnswer(q) {
  if (q.type === "pairs") return [];
  if (q.type === "text") return "";
  if (q.rows !== undefined) return Array(q.rows).fill(null);
  return null;
}

function validValue(q, value) {
  if (q.type === "likert" || q.type === "choice") return q.options.includes(value);
  if (q.type === "count") return Number.isInteger(value) && value >= q.min && value <= q.max;
  return false;
}

function restore(saved) {
  const state = {};
  questions.forEach((q) => {
    const given = saved && typeof saved === "object" ? saved[q.id] : undefined;
    let value = emptyAnswer(q);
    if (q.type === "pairs" && Array.isArray(given)) {
      value = given.filter((p) => Array.isArray(p) && p.length === 2 && p[0] >= 0 && p[0] < q.left
        && p[1] >= 0 && p[1] < q.rows).map(([l, r]) => [l, r]);
    } else if (q.type === "text" && typeof given === "string") {
      value = given;
    } else if (q.rows !== undefined && q.type !== "pairs" && Array.isArray(given)) {
      value = value.map((_, i) => (validValue(q, given[i]) ? given[i] : null));
    } else if (q.rows === undefined && validValue(q, given)) {
      value = given;
    }
    state[q.id] = value;
  });
  return state;
}

// The answer this tab kept (annotation-session.js: DraftKeeper) replaces the rendered one when it is newer: a
// reload that overtook the old page's last draft save must not lose it.
const keeper = new DraftKeeper({key: config.draftUrl, version: config.draftVersion, basedOn: config.basedOn});
const rendered = config.state || {};
const kept = config.open ? keeper.takeNewer(JSON.stringify(restore(rendered.answer))) : null;
const initial = kept ? {...kept, source: "kept"} : rendered;
let state = restore(initial.answer);
let current = {question: 0, row: 0};
let editable = config.open;

// #next-form hands out the next item (a POST to Start or the participant's Next): the submit asks the server to
// do it at once and answers the page to open (one request instead of three); the form stays the fallback
const nextForm = document.getElementById("next-form");
const session = new AnnotationSession({
  draftUrl: config.draftUrl, submitUrl: config.submitUrl, csrfToken, participantToken: config.participantToken,
  askNext: nextForm.method === "post",
  initial, editable, keeper, getState: () => state, video: document.querySelector("#player video"),
  onStatus: (text) => { saveStatus.textContent = text; },
});

// --- rendering -----------------------------------------------------------------------------------------------
function missing(q) {
  const value = state[q.id];
  if (q.type === "pairs") return q.required && !value.length ? 1 : 0;
  if (q.type === "text") return 0;
  if (q.rows !== undefined) return q.required ? value.filter((v) => v === null).length : 0;
  return q.required && value === null ? 1 : 0;
}

function questionStatus(q) {
  const value = state[q.id];
  if (q.type === "pairs") return {done: value.length > 0, text: `${value.length} pair${value.length === 1 ? "" : "s"}`};
  if (q.type === "text") return {done: Boolean(value.trim()), text: value.trim() ? "written" : ""};
  if (q.rows !== undefined) {
    const answered = value.filter((v) => v !== null).length;
    return {done: answered === q.rows, text: `${answered} of ${q.rows} answered`};
  }
  return {done: value !== null, text: value === null ? (q.required ? "no answer yet" : "") : "done"};
}

function setRadios(container, value) {
  container.querySelectorAll('input[type="radio"]').forEach((input) => {
    input.checked = value !== null && input.value === String(value);
    input.disabled = !editable;
  });
}

function render(index) {
  const q = questions[index];
  const root = blocks[index];
  const value = state[q.id];
  if (q.type === "pairs") {
    const chosen = new Set(value.map(([l, r]) => `${l}:${r}`));
    root.querySelectorAll(".task-row").forEach((row) => {
      const r = Number(row.dataset.row);
      row.querySelectorAll(".task-chip").forEach((chip) => {
        chip.setAttribute("aria-pressed", String(chosen.has(`${chip.dataset.left}:${r}`)));
        chip.disabled = !editable;
      });
      row.classList.toggle("task-row--done", value.some(([, rr]) => rr === r));
    });
  } else if (q.type === "text") {
    const area = root.querySelector("textarea");
    if (area.value !== value) area.value = value;
    area.disabled = !editable;
  } else if (q.type === "count" && q.rows === undefined) {
    const input = root.querySelector('input[type="number"]');
    if (document.activeElement !== input) input.value = value === null ? "" : String(value);
    root.querySelectorAll("input, button").forEach((el) => { el.disabled = !editable; });
  } else if (q.rows !== undefined) {
    root.querySelectorAll(".task-row").forEach((row) => {
      const r = Number(row.dataset.row);
      const number = row.querySelector('input[type="number"]');
      if (number) {
        if (document.activeElement !== number) number.value = value[r] === null ? "" : String(value[r]);
        number.disabled = !editable;
      } else {
        setRadios(row, value[r]);
      }
      row.classList.toggle("task-row--done", value[r] !== null);
    });
  } else {
    setRadios(root, value);
  }
  const status = questionStatus(q);
  root.querySelector('[data-role="status"]').textContent = status.text;
  root.classList.toggle("fact-paragraph--done", status.done);
}

function renderAll() {
  questions.forEach((_, i) => render(i));
  setCurrent(current.question, current.row, false);
}

function rowsOf(index) {
  return Array.from(blocks[index].querySelectorAll(".task-row"));
}

function setCurrent(question, row = 0, scroll = false) {
  current = {question, row};
  blocks.forEach((root, i) => root.classList.toggle("is-current", i === question));
  document.querySelectorAll(".task-row.is-current").forEach((el) => el.classList.remove("is-current"));
  const target = rowsOf(question)[row];
  if (target) target.classList.add("is-current");
  if (scroll) (target || blocks[question]).scrollIntoView({block: "nearest", behavior: "smooth"});
}

function locate(element) {
  const root = element.closest(".task-question");
  const row = element.closest(".task-row");
  return {question: root ? Number(root.dataset.question) : null, row: row ? Number(row.dataset.row) : 0};
}

// --- changes -------------------------------------------------------------------------------------------------
function changed(index) {
  render(index);
  session.scheduleDraft();
  if (!problemsBox.hidden) showProblems(clientProblems(), true);
}

function setValue(index, row, value) {
  const q = questions[index];
  if (q.rows !== undefined && q.type !== "pairs") state[q.id][row] = value;
  else state[q.id] = value;
  changed(index);
}

function togglePair(index, left, right) {
  const q = questions[index];
  const pairs = state[q.id];
  const at = pairs.findIndex(([l, r]) => l === left && r === right);
  if (at >= 0) pairs.splice(at, 1);
  else pairs.push([left, right]);
  pairs.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  changed(index);
}

function parseOption(q, raw) {
  return q.type === "likert" ? Number(raw) : raw;
}

form.addEventListener("change", (event) => {
  const input = event.target;
  if (input.type !== "radio" || !editable) return;
  const {question, row} = locate(input);
  setCurrent(question, row);
  setValue(question, row, parseOption(questions[question], input.value));
});

form.addEventListener("click", (event) => {
  const button = event.target.closest("button");
  if (!button || !editable || button.type === "submit") return;
  const {question, row} = locate(button);
  if (question === null) return;
  const q = questions[question];
  setCurrent(question, row);
  if (button.classList.contains("task-chip")) {
    togglePair(question, Number(button.dataset.left), row);
  } else if (button.dataset.action === "increment" || button.dataset.action === "decrement") {
    const step = button.dataset.action === "increment" ? 1 : -1;
    const now = state[q.id] === null ? (step > 0 ? q.min - 1 : q.min + 1) : state[q.id];
    setValue(question, row, Math.max(q.min, Math.min(q.max, now + step)));
  }
});

form.addEventListener("input", (event) => {
  const target = event.target;
  const {question, row} = locate(target);
  if (question === null) return;
  const q = questions[question];
  if (target.tagName === "TEXTAREA") {
    state[q.id] = target.value;
    session.scheduleDraft();
    render(question);
  } else if (target.type === "number") {
    const number = target.value === "" ? null : Number(target.value);
    const value = Number.isInteger(number) && number >= q.min && number <= q.max ? number : null;
    if (q.rows !== undefined) state[q.id][row] = value;
    else state[q.id] = value;
    session.scheduleDraft();
    render(question);
  }
});

form.addEventListener("focusin", (event) => {
  const {question, row} = locate(event.target);
  if (question !== null && (question !== current.question || row !== current.row)) setCurrent(question, row);
});

// --- keyboard shortcuts --------------------------------------------------------------------------------------
function positions() {
  const out = [];
  questions.forEach((q, i) => {
    const rows = rowsOf(i).length;
    if (rows) for (let r = 0; r < rows; r += 1) out.push([i, r]);
    else out.push([i, 0]);
  });
  return out;
}

document.addEventListener("keydown", (event) => {
  if (event.defaultPrevented) return;
  if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
    event.preventDefault();
    attemptSubmit(false);
    return;
  }
  if (event.ctrlKey || event.metaKey || event.altKey || typing(event.target)) return;
  const q = questions[current.question];
  if (/^[0-9]$/.test(event.key) && editable && q) {
    const digit = Number(event.key);
    if (q.type === "likert" && q.options.includes(digit)) {
      event.preventDefault();
      setValue(current.question, current.row, digit);
    } else if (q.type === "choice" && digit >= 1 && digit <= q.options.length) {
      event.preventDefault();
      setValue(current.question, current.row, q.options[digit - 1]);
    } else if (q.type === "pairs" && digit >= 1 && digit <= q.left) {
      event.preventDefault();
      togglePair(current.question, digit - 1, current.row);
    }
  } else if (event.key === "n" || event.key === "p") {
    event.preventDefault();
    const all = positions();
    const at = all.findIndex(([i, r]) => i === current.question && r === current.row);
    const [i, r] = all[Math.max(0, Math.min(all.length - 1, at + (event.key === "n" ? 1 : -1)))];
    setCurrent(i, r, true);
    const row = rowsOf(i)[r];
    const focusable = (row || blocks[i]).querySelector("input, textarea, .task-chip");
    if (focusable) focusable.focus({preventScroll: true});
  }
});

// --- submitting ----------------------------------------------------------------------------------------------
function clientProblems() {
  const problems = [];
  questions.forEach((q, i) => {
    const count = missing(q);
    if (!count) return;
    let message = `“${q.prompt}”: no answer yet.`;
    if (q.type === "pairs") message = `“${q.prompt}”: no pair entered. Submit anyway if nothing matches.`;
    else if (q.rows !== undefined) message = `“${q.prompt}”: ${count} of ${q.rows} rows have no answer yet.`;
    problems.push({question: q.id, element: null, message, index: i});
  });
  return problems;
}

function showProblems(problems, canConfirm, title) {
  renderProblems(problemsBox, confirmButton, problems, canConfirm, title, problemLink);
}

function problemLink(problem) {
  const index = questions.findIndex((q) => q.id === problem.question);
  return {href: index >= 0 ? `#q-${problem.question}` : "#annotation", go: () => {
    if (index < 0) return;
    const row = Number.isInteger(problem.element) ? problem.element : 0;
    setCurrent(index, row, true);
    const target = (rowsOf(index)[row] || blocks[index]).querySelector("input, textarea, .task-chip");
    if (target) target.focus({preventScroll: true});
  }};
}

async function attemptSubmit(confirm) {
  if (!editable || session.finished) return;
  const problems = clientProblems();
  if (problems.length && !confirm) {
    showProblems(problems, true);
    problemsBox.querySelector("a, button:not([hidden])").focus();
    return;
  }
  submitButton.disabled = true;
  confirmButton.disabled = true;
  submitButton.textContent = "Submitting…";
  const result = await session.submit(confirm);
  if (result.busy) return; // a double click: the first request decides
  if (result.ok) {
    editable = false;
    saveStatus.textContent = "Submitted";
    showProblems([], false);
    submitButton.textContent = "Submitted: opening the next item…";
    document.getElementById("leave").setAttribute("aria-disabled", "true");
    // the answer names the next page when the submit handed out the next item (askNext); else the form does
    if (typeof result.body.next === "string" && result.body.next.startsWith("/")) location.assign(result.body.next);
    else nextForm.submit();
    return;
  }
  if (result.offline) {
    showProblems([{question: null, message: "No connection to the server: your answer is kept; try again."}],
      false, "Not submitted:");
  } else if (result.status === 409 && result.body.needs_confirmation) {
    showProblems(result.body.problems || [], true);
  } else {
    showProblems(result.body.problems && result.body.problems.length ? result.body.problems
      : [{question: null, message: result.body.detail || `The server refused the answer (HTTP ${result.status}).`}],
    false, "Not submitted:");
  }
  submitButton.disabled = false;
  confirmButton.disabled = false;
  submitButton.textContent = SUBMIT_TEXT;
}

form.addEventListener("submit", (event) => {
  event.preventDefault();
  attemptSubmit(false);
});
confirmButton.addEventListener("click", () => attemptSubmit(true));

// --- start ---------------------------------------------------------------------------------------------------
if (initial.source === "draft") saveStatus.textContent = "Draft restored";
renderAll();
if (kept) {
  saveStatus.textContent = "Your latest changes were restored";
  session.saveDraft();
}
window.captionEvalTask = {state: () => state, session};
