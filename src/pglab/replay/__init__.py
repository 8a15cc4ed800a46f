"""A captured workload and its replay: a server's statement log read into sessions
(``logfile``), kept as a versioned workload file (``workload_file``), its statements grouped in
classes (``classes``), captured from a live server with logging set and put back
(``capture``)."""
