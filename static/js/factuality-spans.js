// CaptionEval span marker: marking erroneous words of a sentence as token ranges [start, end).
//
// Over the tokens of a sentence (<span class="tok" data-t="i">): drag from one word to another, or click the
// first word and then the last one (clicking one word twice marks that word). Spans always cover whole tokens,
// and a new span overlapping an existing one merges with it (adjacent spans stay two, as "[a] [b]" in FactVC). Keyboard: the words form one tab stop;
// Left / Right (Home / End) move between words, Enter or Space marks the first and then the last word, Escape
// cancels, Delete or Backspace on a marked word removes its span. No dependencies.

export function normalise(spans) {
  const sorted = spans.map(([s, e]) => [s, e]).sort((a, b) => a[0] - b[0]);
  const out = [];
  for (const span of sorted) {
    const last = out[out.length - 1];
    if (last && span[0] < last[1]) last[1] = Math.max(last[1], span[1]);
    else out.push(span);
  }
  return out;
}

export function addSpan(spans, start, end) {
  return normalise([...spans, [Math.min(start, end), Math.max(start, end)]]);
}

export function spanAt(spans, index) {
  return spans.findIndex(([s, e]) => index >= s && index < e);
}

export class SpanMarker {
  // options: {onMark(group, start, end), onRemoveAt(group, tokenIndex), onFocus(group), isEnabled()}
  constructor(root, options) {
    this.root = root;
    this.options = options;
    this.pending = null; // {group, index}: the first word clicked, waiting for the last one
    this.drag = null; // {group, from, to, moved}
    this.bind();
  }

  tokenOf(target) {
    const token = target instanceof Element ? target.closest(".tok") : null;
    return token && this.root.contains(token) ? token : null;
  }

  groupOf(token) {
    return token.closest(".fact-tokens");
  }

  index(token) {
    return Number(token.dataset.t);
  }

  bind() {
    this.root.addEventListener("mousedown", (event) => {
      const token = this.tokenOf(event.target);
      if (!token || event.button !== 0 || !this.options.isEnabled()) return;
      event.preventDefault(); // no text selection while dragging
      this.focusToken(token);
      this.drag = {group: this.groupOf(token), from: this.index(token), to: this.index(token), moved: false};
      this.preview();
    });
    this.root.addEventListener("mouseover", (event) => {
      if (!this.drag) return;
      const token = this.tokenOf(event.target);
      if (!token || this.groupOf(token) !== this.drag.group) return;
      const index = this.index(token);
      if (index !== this.drag.to) {
        this.drag.to = index;
        this.drag.moved = this.drag.moved || index !== this.drag.from;
        this.preview();
      }
    });
    document.addEventListener("mouseup", () => {
      if (!this.drag) return;
      const {group, from, to, moved} = this.drag;
      this.drag = null;
      this.clearPreview();
      if (moved) {
        this.cancel();
        this.options.onMark(group, Math.min(from, to), Math.max(from, to) + 1);
      } else {
        this.pick(group, from);
      }
    });
    this.root.addEventListener("keydown", (event) => this.handleKey(event));
    this.root.addEventListener("focusin", (event) => {
      const token = this.tokenOf(event.target);
      if (token) this.options.onFocus(this.groupOf(token));
    });
  }

  // A click (or Enter) on a word: the first word of a span, or its last one.
  pick(group, index) {
    if (this.pending && this.pending.group === group) {
      const start = Math.min(this.pending.index, index);
      const end = Math.max(this.pending.index, index) + 1;
      this.cancel();
      this.options.onMark(group, start, end);
      return;
    }
    this.cancel();
    this.pending = {group, index};
    const token = group.querySelector(`.tok[data-t="${index}"]`);
    token.classList.add("tok--start");
    group.setAttribute("data-pending", "true");
    this.announce(group, `Span starts at “${token.textContent}”: choose the last word.`);
  }

  cancel() {
    if (!this.pending) return false;
    this.pending.group.removeAttribute("data-pending");
    for (const token of this.pending.group.querySelectorAll(".tok--start")) token.classList.remove("tok--start");
    this.pending = null;
    return true;
  }

  preview() {
    this.clearPreview();
    const {group, from, to} = this.drag;
    const [low, high] = [Math.min(from, to), Math.max(from, to)];
    for (const token of group.querySelectorAll(".tok")) {
      const index = this.index(token);
      token.classList.toggle("tok--preview", index >= low && index <= high);
    }
  }

  clearPreview() {
    for (const token of this.root.querySelectorAll(".tok--preview")) token.classList.remove("tok--preview");
  }

  focusToken(token) {
    const group = this.groupOf(token);
    for (const other of group.querySelectorAll(".tok")) other.tabIndex = other === token ? 0 : -1;
    token.focus({preventScroll: false});
  }

  announce(group, text) {
    const live = document.getElementById("span-live");
    if (live) live.textContent = text;
  }

  handleKey(event) {
    const token = this.tokenOf(event.target);
    if (!token || event.ctrlKey || event.metaKey || event.altKey) return;
    const group = this.groupOf(token);
    const tokens = Array.from(group.querySelectorAll(".tok"));
    const at = tokens.indexOf(token);
    const move = {ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: tokens.length - 1}[event.key];
    if (move !== undefined) {
      event.preventDefault();
      this.focusToken(tokens[Math.max(0, Math.min(tokens.length - 1, move))]);
    } else if (event.key === "Enter" || event.key === " ") {
      event.preventDefault(); // also keeps Space from playing the video
      if (this.options.isEnabled()) this.pick(group, this.index(token));
    } else if (event.key === "Escape") {
      if (this.cancel()) event.preventDefault();
    } else if (event.key === "Delete" || event.key === "Backspace") {
      event.preventDefault();
      if (this.options.isEnabled()) this.options.onRemoveAt(group, this.index(token));
    }
  }
}
