// CaptionEval: the list of problems of a refused (or not yet sent) submit, the same on every annotation page
// (the markup is templates/workflow/partials/submit_controls.html). Each problem is a link; the page says where
// it leads: linkFor(problem) -> {href, go}, go() moving the focus to what needs an answer.

export const DEFAULT_TITLE = "Not submitted yet: please complete these, or submit anyway if you mean it.";

export function showProblems(box, confirmButton, problems, canConfirm, title, linkFor) {
  if (!problems.length) {
    box.hidden = true;
    return;
  }
  box.hidden = false;
  box.querySelector(".fact-problems__title").textContent = title || DEFAULT_TITLE;
  box.querySelector(".fact-problems__list").replaceChildren(...problems.map((problem) => {
    const item = document.createElement("li");
    const link = document.createElement("a");
    const {href, go} = linkFor(problem);
    link.href = href;
    link.textContent = problem.message;
    link.addEventListener("click", (event) => {
      event.preventDefault();
      go();
    });
    item.append(link);
    return item;
  }));
  confirmButton.hidden = !canConfirm;
}
