"""Planning a design, the last room of the access family: its config checked (workflow_config),
its calls, tokens, dollars and wall time estimated before it runs (cost_estimate,
cost_calibration), its power and price planned over a grid of designs (design_planner), and a
running design's progress against that estimate. It reads every stage; no stage reads it."""
