import pytest

from utp.intent import DEFAULT_RULES, IntentRule, detect_intent_tier, matching_rules
from utp.types import ToolTier


@pytest.mark.parametrize(
    "text, tier",
    [
        ("What's the weather in Tokyo?", ToolTier.CRAWL),
        ("Please READ auth.py", ToolTier.WALK),
        ("search the repo for TODOs", ToolTier.WALK),
        ("Explain what this function does", ToolTier.WALK),
        ("write a test for parse()", ToolTier.RUN),
        ("Run the test suite", ToolTier.RUN),
        ("find the bug and fix it", ToolTier.RUN),
        ("Could you commit this?", ToolTier.RUN),
    ],
)
def test_default_rules(text, tier):
    assert detect_intent_tier(text) is tier


@pytest.mark.parametrize("text", ["check the fixture", "what is the runtime?", "a rerun of the thread", "prefix only"])
def test_words_match_whole_words_only(text):
    assert detect_intent_tier(text) is ToolTier.CRAWL


def test_matching_rules_report_the_trigger():
    hits = matching_rules("Show me, then Delete it")
    assert [(rule.tier, word) for rule, word in hits] == [(ToolTier.WALK, "Show"), (ToolTier.RUN, "Delete")]


def test_custom_rules_with_regex():
    rules = [IntentRule("walk", pattern=r"\bwhat(?:'s| is)\b"), IntentRule(ToolTier.RUN, words=("deploy",))]
    assert detect_intent_tier("What's in main.py", rules) is ToolTier.WALK
    assert detect_intent_tier("DEPLOY now", rules) is ToolTier.RUN
    assert detect_intent_tier("read it", rules) is ToolTier.CRAWL


def test_rule_needs_words_or_pattern():
    with pytest.raises(ValueError, match="neither words nor a pattern"):
        IntentRule(ToolTier.WALK)


def test_bad_regex_is_a_clear_error():
    with pytest.raises(ValueError, match="bad pattern"):
        IntentRule(ToolTier.WALK, pattern="(")


def test_multiword_phrases_and_special_characters():
    rules = [IntentRule(ToolTier.RUN, words=("git push", "c++"))]
    assert detect_intent_tier("please git push it", rules) is ToolTier.RUN
    assert detect_intent_tier("build the c++ code", rules) is ToolTier.RUN
    assert detect_intent_tier("gitpush", rules) is ToolTier.CRAWL


def test_defaults_have_readable_examples():
    run_rule = [r for r in DEFAULT_RULES if r.tier is ToolTier.RUN][0]
    assert run_rule.examples[:3] == ("write", "edit", "create")
