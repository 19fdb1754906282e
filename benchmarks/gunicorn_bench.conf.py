"""gunicorn settings of benchmarks/crowd_arrivals.py: none beyond the command line (the repository's
gunicorn.conf.py is the deployment's)."""
