"""Memory construction: segmentation, time, FTA extraction with carry-over and fusion, linking,
longitudinal memory, and the build loop that runs them (resume, stop, cost, events)."""
