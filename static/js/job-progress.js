// Live progress of background jobs: every .job-progress element polls its job until the job has finished.
// With data-reload-on-success="true" the page reloads once the job succeeded, so it shows the job's results.
(function () {
  "use strict";

  function describe(job) {
    var text = job.done + (job.total ? " / " + job.total : "") + " · " + job.status;
    return job.message ? text + " · " + job.message : text;
  }

  function watch(element) {
    var url = element.dataset.jobUrl;
    var bar = element.querySelector("progress");
    var text = element.querySelector("[data-role=text]");
    function poll() {
      fetch(url, { headers: { Accept: "application/json" }, credentials: "same-origin" })
        .then(function (response) { return response.ok ? response.json() : Promise.reject(response.status); })
        .then(function (job) {
          bar.value = job.percent;
          bar.textContent = job.percent + "%";
          text.textContent = describe(job);
          element.dataset.status = job.status;
          if (job.finished) {
            element.dataset.finished = "true";
            if (job.status === "succeeded" && element.dataset.reloadOnSuccess === "true") {
              window.location.reload();
            } else if (job.error) {
              text.textContent += " · " + job.error;
            }
          } else {
            window.setTimeout(poll, 1000);
          }
        })
        .catch(function () { window.setTimeout(poll, 5000); });
    }
    poll();
  }

  document.querySelectorAll(".job-progress[data-finished=false]").forEach(watch);
})();
