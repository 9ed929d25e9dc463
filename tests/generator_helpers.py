"""Running a scripted participant's generator to its end in tests."""


def drive(gen):
    """Exhaust a generator that yields actions and return its value (the replies it would wait
    for are not needed: the tests' agents answer inside the generator)."""
    try:
        while True:
            next(gen)
    except StopIteration as stop:
        return stop.value
