"""Stage 3, reference: the tool partition per arm, the coordination reference, and the locks."""
