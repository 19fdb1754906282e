// CaptionEval: small helpers both annotation pages (factuality-annotate.js, task-annotate.js) use.

// The CSRF token of the page's "next" form (the pages' POST and PUT requests send it).
export function csrfToken() {
  const input = document.querySelector("#next-form input[name=csrfmiddlewaretoken]");
  return input ? input.value : "";
}

// Whether a key press goes to a text field (then the page's keyboard shortcuts stay out of the way).
export function typing(target) {
  return target instanceof Element && (target.closest("textarea, select") || target.isContentEditable
    || (target.closest("input") && !["radio", "checkbox", "range", "button", "submit"].includes(target.type)));
}
