"""The trajectory viewer (issue #18): a static site under results/viewer/ that opens from disk.

`incognita view` writes an index of every trial and CollabSim run, and one small data file
per episode, native run and CollabSim run, loaded on demand (docs/viewer.md). The pages are
plain HTML, CSS and JavaScript shipped with the package (`assets/`), so the site needs no
server, no network and no build tool.
"""

# Passed to the workflow rule as a param: bump it when a change here should rebuild the site.
VIEWER_VERSION = 6  # 6: the trials index carries each trial's domain
