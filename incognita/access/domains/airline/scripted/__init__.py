"""The airline domain's scripted part: its agent's knowledge of the policy's rules and of the
airline's records (agent.AGENT)."""
