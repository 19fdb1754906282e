"""gunicorn settings of benchmarks/crowd_arrivals.py: the rest is on its command line (the repository's
gunicorn.conf.py is the deployment's). Like the deployment's, each worker warms up before it takes requests."""


def post_worker_init(worker):
    from annotation_site.warm import warm_up

    worker.log.info("warmed up in %.2f s", warm_up())
