"""The retail domain's scripted part: its agent's knowledge of retail's records (agent.AGENT)."""
