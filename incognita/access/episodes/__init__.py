"""Stage 5, episodes: the harness, the episode loop, the gate, the gateway, prompts, records and the scripted participants."""
