"""What both environment families use: model backends and their registry, the response
cache, prices, usage, atomic I/O, interval estimates, tables and figure output.

Nothing here imports a family (`incognita` top-level modules for Incognita, `incognita.collabsim`).
"""
