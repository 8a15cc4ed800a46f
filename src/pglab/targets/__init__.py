"""Storage targets (``[targets.NAME]``, ``pglab storage``): the storage under test, the
filesystems pglab makes for it and always undoes, storage micro-benchmarks and their output.
(Not ``store/``, where results are kept.)"""
