// Metric pages: follow the background computation of metric scores (polling /api/jobs/ID/) and reload the page
// once the scores are stored, so the table and charts show them. Without JavaScript the page works the same,
// only without live progress.
(function () {
  "use strict";

  var element = document.getElementById("compute-job");
  if (!element || element.dataset.finished === "true") { return; }
  var bar = element.querySelector("progress");
  var text = element.querySelector("[data-role=text]");

  function describe(job) {
    var words = job.done + (job.total ? " / " + job.total : "") + " · " + job.status;
    return job.message ? words + " · " + job.message : words;
  }

  function poll() {
    fetch(element.dataset.jobUrl, { headers: { Accept: "application/json" }, credentials: "same-origin" })
      .then(function (response) { return response.ok ? response.json() : Promise.reject(response.status); })
      .then(function (job) {
        bar.value = job.percent;
        bar.textContent = job.percent + "%";
        text.textContent = describe(job);
        element.dataset.status = job.status;
        if (!job.finished) {
          window.setTimeout(poll, 1000);
          return;
        }
        element.dataset.finished = "true";
        if (job.status === "succeeded") {
          window.location.reload();
        } else if (job.error) {
          var error = document.createElement("span");
          error.className = "field__error";
          error.setAttribute("data-role", "error");
          error.textContent = job.error;  // text, never HTML
          element.appendChild(error);
        }
      })
      .catch(function () { window.setTimeout(poll, 5000); });
  }

  poll();
})();
