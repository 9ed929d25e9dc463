"""Persona profiles for CollabSim agents: a library built in two layers.

Written by `incognita collabsim personas` into `config/collabsim/personas.yaml` (committed), which
runs read through `world.persona_library` (each agent with `persona: true` gets the profile its
own seed draws, so the same config and seed always give the same personas); this module only
builds. Layer one samples the attributes with rules that keep them plausible together (the
paper's Appendix 13): occupation given the age band, education given age and occupation, income
given occupation, and each Big Five trait high or low independently. Layer two writes the
description from those attributes alone, from sentence fragments written for this project, so it
never adds a fact the attributes do not hold.
"""

from __future__ import annotations

import random

GENDERS = ("woman", "man", "non-binary person")
AGES = ("18-24", "25-34", "35-44", "45-54", "55-64", "65+")
# occupation -> the age bands it is plausible in
OCCUPATIONS = {
    "student": ("18-24", "25-34"),
    "service worker": ("18-24", "25-34", "35-44", "45-54", "55-64"),
    "skilled trade worker": ("18-24", "25-34", "35-44", "45-54", "55-64"),
    "office administrator": ("25-34", "35-44", "45-54", "55-64"),
    "teacher": ("25-34", "35-44", "45-54", "55-64"),
    "nurse": ("25-34", "35-44", "45-54", "55-64"),
    "software engineer": ("25-34", "35-44", "45-54"),
    "small business owner": ("25-34", "35-44", "45-54", "55-64", "65+"),
    "manager or executive": ("35-44", "45-54", "55-64"),
    "researcher": ("25-34", "35-44", "45-54", "55-64"),
    "retired": ("55-64", "65+"),
}
EDUCATION = ("high school diploma", "some college", "bachelor's degree", "graduate degree")
# occupation -> the education levels it is plausible with
EDUCATION_BY_OCCUPATION = {
    "student": ("high school diploma", "some college", "bachelor's degree"),
    "service worker": ("high school diploma", "some college"),
    "skilled trade worker": ("high school diploma", "some college"),
    "office administrator": ("high school diploma", "some college", "bachelor's degree"),
    "teacher": ("bachelor's degree", "graduate degree"),
    "nurse": ("some college", "bachelor's degree", "graduate degree"),
    "software engineer": ("some college", "bachelor's degree", "graduate degree"),
    "small business owner": EDUCATION,
    "manager or executive": ("bachelor's degree", "graduate degree"),
    "researcher": ("graduate degree",),
    "retired": EDUCATION,
}
INCOME_BY_OCCUPATION = {
    "student": ("low",),
    "service worker": ("low", "lower-middle"),
    "skilled trade worker": ("lower-middle", "middle"),
    "office administrator": ("lower-middle", "middle"),
    "teacher": ("middle",),
    "nurse": ("middle", "upper-middle"),
    "software engineer": ("upper-middle", "high"),
    "small business owner": ("lower-middle", "middle", "upper-middle", "high"),
    "manager or executive": ("upper-middle", "high"),
    "researcher": ("middle", "upper-middle"),
    "retired": ("low", "lower-middle", "middle", "upper-middle"),
}
TRAITS = ("openness", "conscientiousness", "extraversion", "agreeableness", "neuroticism")
AGE_WORDS = {
    "18-24": "in your early twenties",
    "25-34": "in your late twenties or early thirties",
    "35-44": "in your late thirties or early forties",
    "45-54": "in your late forties or early fifties",
    "55-64": "in your late fifties or early sixties",
    "65+": "over sixty-five",
}
# trait -> level -> two ways of saying it; the description uses one, chosen by the library's seed
TRAIT_SENTENCES = {
    "openness": {
        "high": (
            "New ideas excite you, and you like to try an unusual approach before the familiar one.",
            "You are curious by habit and happy to rethink a plan when something better turns up.",
        ),
        "low": (
            "You prefer methods you already know work and are wary of untested ideas.",
            "You like routine and change course only when there is a clear reason to.",
        ),
    },
    "conscientiousness": {
        "high": (
            "You plan ahead, keep track of details and finish what you start.",
            "You are organised and dependable, and you dislike leaving loose ends.",
        ),
        "low": (
            "You work in bursts, improvise as you go and sometimes lose track of the details.",
            "You would rather stay flexible than follow a plan, even if it means loose ends.",
        ),
    },
    "extraversion": {
        "high": (
            "You speak up readily, enjoy talking things through and draw energy from a group.",
            "You are outgoing and quick to start a conversation.",
        ),
        "low": (
            "You are reserved, think before you speak and say no more than you need to.",
            "You prefer to listen first and keep your messages short.",
        ),
    },
    "agreeableness": {
        "high": (
            "You assume good intentions, look for compromise and avoid open conflict.",
            "You are trusting and considerate and like to keep the peace.",
        ),
        "low": (
            "You are sceptical of others' motives and will push hard for what you think is right.",
            "You are blunt, competitive and unwilling to give ground without a reason.",
        ),
    },
    "neuroticism": {
        "high": (
            "You worry about what could go wrong and take setbacks to heart.",
            "Pressure makes you anxious, and you second-guess your choices.",
        ),
        "low": ("You stay calm under pressure and shrug off setbacks.", "You are even-tempered and rarely rattled."),
    },
}


def sample_attributes(rng: random.Random) -> dict:
    """Layer one: plausible demographics, then independent Big Five levels."""
    age = rng.choice(AGES)
    occupation = rng.choice(sorted(o for o, ages in OCCUPATIONS.items() if age in ages))
    education = rng.choice(EDUCATION_BY_OCCUPATION[occupation])
    if occupation == "student" and age == "18-24":
        education = rng.choice(("high school diploma", "some college"))
    return {
        "gender": rng.choice(GENDERS),
        "age_range": age,
        "education": education,
        "occupation": occupation,
        "income": rng.choice(INCOME_BY_OCCUPATION[occupation]),
        "big_five": {t: rng.choice(("high", "low")) for t in TRAITS},
    }


def describe(attrs: dict, rng: random.Random) -> str:
    """Layer two: a second-person paragraph built from the attributes only."""
    job = (
        "retired"
        if attrs["occupation"] == "retired"
        else f"working as {_article(attrs['occupation'])} {attrs['occupation']}"
        if attrs["occupation"] != "student"
        else "studying"
    )
    education = (
        "some college education"
        if attrs["education"] == "some college"
        else f"{_article(attrs['education'])} {attrs['education']}"
    )
    head = (
        f"You are {_article(attrs['gender'])} {attrs['gender']} {AGE_WORDS[attrs['age_range']]}, with "
        f"{education}, {job}, on {_article(attrs['income'])} {attrs['income']} income."
    )
    traits = [rng.choice(TRAIT_SENTENCES[t][attrs["big_five"][t]]) for t in TRAITS]
    return " ".join([head, *traits])


def _article(word: str) -> str:
    return "an" if word[0] in "aeiou" else "a"


def build_library(count: int, seed: int) -> list[dict]:
    rng = random.Random(f"personas:{seed}")
    library = []
    for n in range(1, count + 1):
        attrs = sample_attributes(rng)
        library.append({"id": f"p{n:02d}", **attrs, "description": describe(attrs, rng)})
    return library
