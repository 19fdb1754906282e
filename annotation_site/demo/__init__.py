"""The demo: a dataset made locally and the work of every app on it (``manage.py load_demo``).

It sits above every app it fills (corpus, interchange, factuality, assessment), so none of them imports it."""
