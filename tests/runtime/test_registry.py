import asyncio
import threading
import time
from pathlib import Path
from dataclasses import dataclass, field
from typing import Any

import pytest

from utp.pathguard import PathGuard
from utp.providers import FunctionToolProvider
from utp.registry import ToolRegistrationError, ToolRegistry, normalise_tool_name
from utp.types import ErrorKind, Tool, ToolCall, ToolResult, ToolTier

from .doubles import Recorder

WEATHER = Tool(
    "get_weather",
    "Current weather for a city.",
    {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]},
)
READ = Tool("read_file", "Read a file.", {"type": "object", "properties": {"path": {"type": "string", "format": "path"}},
                                          "required": ["path"]}, tier=ToolTier.WALK)
WRITE = Tool("write_file", "Write a file.", {"type": "object", "properties": {
    "path": {"type": "string", "format": "path"}, "content": {"type": "string"}}, "required": ["path", "content"]},
    tier=ToolTier.RUN)


@pytest.fixture
def handlers():
    return {"get_weather": Recorder({"temp_c": 11}), "read_file": Recorder("text"), "write_file": Recorder("written")}


@pytest.fixture
def registry(handlers):
    reg = ToolRegistry()
    for tool in (WEATHER, READ, WRITE):
        reg.register(tool, handlers[tool.name])
    return reg


def run(coro):
    return asyncio.run(coro)


# ------------------------------------------------------------------ tiers


def test_available_tools_follow_the_tier(registry):
    assert registry.current_tier is ToolTier.CRAWL
    assert registry.list_tool_names(available_only=True) == ["get_weather"]
    assert registry.unlock("walk") is ToolTier.WALK
    assert [t.name for t in registry.available_tools()] == ["get_weather", "read_file"]
    assert registry.is_tool_available("read_file") and not registry.is_tool_available("write_file")
    assert registry.list_tool_names() == ["get_weather", "read_file", "write_file"]
    assert registry.get_tool("write_file") is WRITE and registry.get_tool("nope") is None


def test_unlock_is_monotonic_until_reset(registry):
    registry.unlock(ToolTier.RUN)
    assert registry.unlock(ToolTier.CRAWL) is ToolTier.RUN
    assert registry.reset() is ToolTier.CRAWL
    assert registry.reset("walk") is ToolTier.WALK


def test_apply_intent_unlocks_from_the_request(registry):
    assert registry.apply_intent("what's the weather?") is ToolTier.CRAWL
    assert registry.apply_intent("read config.toml") is ToolTier.WALK
    assert registry.apply_intent("hello again") is ToolTier.WALK  # never lowers
    assert registry.apply_intent("now write the fix") is ToolTier.RUN


# ------------------------------------------------------------------ refusals (never executed)


def test_unknown_tool_lists_available_tools_but_not_locked_ones(registry, handlers):
    result = run(registry.execute(ToolCall("delete_everything", {}, id="c1")))
    assert result.error_kind is ErrorKind.UNKNOWN_TOOL and not result.executed
    assert result.call_id == "c1"
    assert "Available tools: get_weather." in result.error
    assert "write_file" not in result.error and "read_file" not in result.error
    assert all(not h.calls for h in handlers.values())


def test_tier_violation_says_which_tier_and_what_unlocks_it(registry, handlers):
    result = run(registry.execute(ToolCall("write_file", {"path": "a", "content": "x"})))
    assert result.error_kind is ErrorKind.TIER_VIOLATION and not result.executed
    assert "needs the RUN tier" in result.error and "session is at CRAWL" in result.error
    assert "write" in result.error and "properties" not in result.error  # no schema leak
    assert not handlers["write_file"].calls


@pytest.mark.parametrize("variant", [" Write_File ", "WRITE_FILE", "write-file", "Write File", "\twrite_file\n"])
def test_name_variants_of_a_locked_tool_are_tier_violations(registry, handlers, variant):
    decision = registry.check(ToolCall(variant, {"path": "a", "content": "x"}))
    assert decision.error_kind is ErrorKind.TIER_VIOLATION
    result = run(registry.execute(ToolCall(variant, {"path": "a", "content": "x"})))
    assert result.error_kind is ErrorKind.TIER_VIOLATION and not result.executed
    assert not handlers["write_file"].calls


def test_variant_of_an_available_tool_is_not_executed_but_hinted(registry, handlers):
    result = run(registry.execute(ToolCall("Get_Weather", {"city": "Oslo"})))
    assert result.error_kind is ErrorKind.UNKNOWN_TOOL
    assert "Did you mean 'get_weather'?" in result.error
    assert not handlers["get_weather"].calls


def test_invalid_arguments_name_each_field(registry, handlers):
    result = run(registry.execute(ToolCall("get_weather", {"days": "2.5"})))
    assert result.error_kind is ErrorKind.INVALID_ARGUMENTS and not result.executed
    assert "'city' is a required property" in result.error
    assert "days: '2.5' is not of type 'integer'" in result.error
    assert "Expected: city (string, required), days (integer)" in result.error
    assert not handlers["get_weather"].calls


def test_coercions_are_applied_and_recorded_on_the_result(registry, handlers):
    result = run(registry.execute(ToolCall("get_weather", {"city": "Oslo", "days": "3"})))
    assert result.executed and result.success and result.result == {"temp_c": 11}
    assert handlers["get_weather"].calls == [{"city": "Oslo", "days": 3}]
    assert result.coercions == ['days: "3" -> 3 (string to integer)']
    assert result.duration_s is not None and result.duration_s >= 0


def test_path_violation_refuses_and_does_not_run(tmp_path, handlers):
    root = tmp_path / "repo"
    root.mkdir()
    reg = ToolRegistry(tier="walk", path_guard=PathGuard([root]))
    reg.register(READ, handlers["read_file"])
    result = run(reg.execute(ToolCall("read_file", {"path": "../../etc/passwd"})))
    assert result.error_kind is ErrorKind.PATH_VIOLATION and not result.executed
    assert "'../../etc/passwd'" in result.error and str(tmp_path) not in result.error
    assert not handlers["read_file"].calls


def test_symlink_escape_is_a_path_violation(tmp_path, handlers):
    root, outside = tmp_path / "repo", tmp_path / "outside"
    root.mkdir(), outside.mkdir()
    (outside / "secret").write_text("s")
    (root / "innocent.txt").symlink_to(outside / "secret")
    reg = ToolRegistry(tier="walk", path_guard=PathGuard([root]))
    reg.register(READ, handlers["read_file"])
    assert run(reg.execute(ToolCall("read_file", {"path": "innocent.txt"}))).error_kind is ErrorKind.PATH_VIOLATION
    assert not handlers["read_file"].calls


def test_allowed_path_reaches_the_handler_resolved(tmp_path):
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("A")
    reg = ToolRegistry(tier="walk", path_guard=PathGuard([root]))
    reg.register(READ, lambda path: Path(path).read_text())
    result = run(reg.execute(ToolCall("read_file", {"path": "src/a.py"})))
    assert result.result == "A"


def test_registry_level_path_params_cover_tools_without_schema_marks(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    cat = Tool("cat", "", {"type": "object", "properties": {"files": {"type": "array", "items": {"type": "string"}}}})
    seen = Recorder()
    reg = ToolRegistry(path_guard=PathGuard([root]), path_params={"cat": ["files"]})
    reg.register(cat, seen)
    assert run(reg.execute(ToolCall("cat", {"files": ["ok.txt", "../no.txt"]}))).error_kind is ErrorKind.PATH_VIOLATION
    assert run(reg.execute(ToolCall("cat", {"files": ["ok.txt"]}))).success
    assert seen.calls == [{"files": [str((root / "ok.txt").resolve())]}]


def test_rewrite_paths_off_passes_the_path_as_written_anchored_at_the_first_root(tmp_path):
    """Not resolved (symlinks stay), but never relative: the guard checked it against the root, not the working directory."""
    reg = ToolRegistry(tier="walk", path_guard=PathGuard([tmp_path]), rewrite_paths=False)
    seen = Recorder()
    reg.register(READ, seen)
    run(reg.execute(ToolCall("read_file", {"path": "x/../x/y.txt"})))
    assert seen.calls == [{"path": str(tmp_path.resolve() / "x/../x/y.txt")}]


def test_confirmation_required_without_callback(handlers):
    tool = Tool("deploy", "", requires_confirmation=True)
    reg = ToolRegistry()
    reg.register(tool, handlers["write_file"])
    result = run(reg.execute(ToolCall("deploy", {})))
    assert result.error_kind is ErrorKind.CONFIRMATION_REQUIRED and not result.executed
    assert not handlers["write_file"].calls


def test_confirmation_declined_and_granted():
    asked: list[tuple[str, dict]] = []

    def confirm(tool, arguments):
        asked.append((tool.name, arguments))
        return arguments.get("target") == "staging"

    seen = Recorder("deployed")
    reg = ToolRegistry(confirm=confirm)
    reg.register(Tool("deploy", "", {"type": "object", "properties": {"target": {"type": "string"}}},
                      requires_confirmation=True), seen)
    declined = run(reg.execute(ToolCall("deploy", {"target": "prod"})))
    assert declined.error_kind is ErrorKind.CONFIRMATION_REQUIRED and "declined" in declined.error
    granted = run(reg.execute(ToolCall("deploy", {"target": "staging"})))
    assert granted.result == "deployed" and granted.executed
    assert seen.calls == [{"target": "staging"}]
    assert asked == [("deploy", {"target": "prod"}), ("deploy", {"target": "staging"})]


def test_async_confirm_callback():
    async def confirm(tool, arguments):
        await asyncio.sleep(0)
        return True

    reg = ToolRegistry(confirm=confirm)
    reg.register(Tool("deploy", "", requires_confirmation=True), lambda: "ok")
    assert run(reg.execute(ToolCall("deploy", {}))).result == "ok"


# ------------------------------------------------------------------ execution outcomes


def test_sync_handler_timeout_is_reported_and_abandoned():
    release = threading.Event()

    def slow():
        release.wait(5)
        return "late"

    reg = ToolRegistry()
    reg.register(Tool("slow", ""), slow)
    try:
        result = run(reg.execute(ToolCall("slow", {}), timeout_s=0.05))
    finally:
        release.set()
    assert result.error_kind is ErrorKind.TIMEOUT
    assert "within 0.05 s" in result.error


def test_async_handler_timeout_cancels_it():
    cancelled = []

    async def slow():
        try:
            await asyncio.sleep(5)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise

    reg = ToolRegistry(default_timeout_s=0.05)
    reg.register(Tool("slow", ""), slow)
    result = run(reg.execute(ToolCall("slow", {})))
    assert result.error_kind is ErrorKind.TIMEOUT and cancelled == [True]


def test_execution_error_carries_the_message_not_a_traceback():
    def broken(city):
        raise LookupError(f"no station near {city}")

    reg = ToolRegistry()
    reg.register(WEATHER, broken)
    result = run(reg.execute(ToolCall("get_weather", {"city": "Atlantis"})))
    assert result.error_kind is ErrorKind.EXECUTION_ERROR and result.executed
    assert result.error == "LookupError: no station near Atlantis"
    assert "Traceback" not in result.content_text()


def test_handler_returning_a_tool_result_error_is_an_execution_error():
    reg = ToolRegistry()
    reg.register(Tool("t", ""), lambda: ToolResult(None, "", error="disk full"))
    result = run(reg.execute(ToolCall("t", {}, id="x")))
    assert result.error == "disk full" and result.error_kind is ErrorKind.EXECUTION_ERROR
    assert result.call_id == "x" and result.tool_name == "t"


def test_async_handlers_run_on_the_loop():
    async def double(n: int) -> int:
        await asyncio.sleep(0)
        return n * 2

    reg = ToolRegistry()
    reg.register(Tool("double", "", {"type": "object", "properties": {"n": {"type": "integer"}}}), double)
    assert run(reg.execute(ToolCall("double", {"n": "21"}))).result == 42


def test_sync_handlers_do_not_block_the_event_loop():
    def sleepy():
        time.sleep(0.2)
        return "done"

    async def main(reg):
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        task = asyncio.create_task(ticker())
        result = await reg.execute(ToolCall("sleepy", {}))
        task.cancel()
        return result, ticks

    reg = ToolRegistry()
    reg.register(Tool("sleepy", ""), sleepy)
    result, ticks = run(main(reg))
    assert result.result == "done" and ticks > 1


# ------------------------------------------------------------------ registration


def test_duplicate_registration_is_refused_unless_replacing(handlers):
    reg = ToolRegistry()
    reg.register(WEATHER, handlers["get_weather"])
    with pytest.raises(ToolRegistrationError, match="already registered"):
        reg.register(WEATHER, handlers["get_weather"])
    reg.register(WEATHER, lambda city, days=0: "new", replace=True)
    assert run(reg.execute(ToolCall("get_weather", {"city": "x"}))).result == "new"
    assert len(reg) == 1


def test_invalid_schema_is_refused_at_registration():
    with pytest.raises(ToolRegistrationError, match="'bad'.*invalid JSON Schema"):
        ToolRegistry().register(Tool("bad", "", {"type": "object", "properties": {"a": {"type": 5}}}), lambda a: a)


def test_register_accepts_openai_shaped_definitions():
    reg = ToolRegistry()
    tool = reg.register({"type": "function", "function": {"name": "ping", "parameters": {"type": "object", "properties": {}}},
                         "tier": "walk"}, lambda: "pong")
    assert tool.tier is ToolTier.WALK and "ping" in reg


def test_unregister(registry):
    registry.unregister("write_file")
    assert "write_file" not in registry
    assert registry.check(ToolCall(" Write_File ", {})).error_kind is ErrorKind.UNKNOWN_TOOL
    with pytest.raises(KeyError):
        registry.unregister("write_file")


def test_register_function_builds_the_schema():
    def add(a: int, b: int = 0) -> int:
        """Add two integers."""
        return a + b

    reg = ToolRegistry()
    tool = reg.register_function(add, tier="walk")
    assert tool.required == ["a"] and tool.description == "Add two integers." and tool.tier is ToolTier.WALK
    reg.unlock("walk")
    assert run(reg.execute(ToolCall("add", {"a": "2", "b": 3}))).result == 5


def test_normalise_tool_name():
    assert normalise_tool_name("  Write-File ") == "write_file" == normalise_tool_name("WRITE  FILE")


# ------------------------------------------------------------------ providers


@dataclass
class SeedParameter:  # seed 002's ToolParameter
    type: str
    description: str = ""
    required: bool = False
    default: Any = None
    enum: list | None = None


@dataclass
class SeedTool:  # seed 002's Tool: parameters are {name: ToolParameter}
    name: str
    description: str
    parameters: dict = field(default_factory=dict)


@dataclass
class SeedResult:  # seed 002's ToolResult
    success: bool
    result: Any = None
    error: str | None = None


class SeedWeatherProvider:
    def __init__(self):
        self.history = []

    async def list_tools(self):
        return [SeedTool("get_forecast", "Forecast.", {"city": SeedParameter("string", required=True),
                                                       "days": SeedParameter("integer", default=5)})]

    async def execute_tool(self, tool_name, parameters):
        self.history.append((tool_name, parameters))
        if parameters["city"] == "Nowhere":
            return SeedResult(False, error="City 'Nowhere' not found")
        return SeedResult(True, result={"city": parameters["city"], "days": parameters.get("days", 5)})


def test_seed_002_provider_plugs_in():
    provider = SeedWeatherProvider()
    reg = ToolRegistry()
    added = run(reg.add_provider(provider, tier="walk"))
    assert [t.name for t in added] == ["get_forecast"] and added[0].tier is ToolTier.WALK
    assert added[0].required == ["city"]
    assert run(reg.execute(ToolCall("get_forecast", {"city": "Paris"}))).error_kind is ErrorKind.TIER_VIOLATION
    reg.unlock("walk")
    ok = run(reg.execute(ToolCall("get_forecast", {"city": "Paris", "days": "2"})))
    assert ok.result == {"city": "Paris", "days": 2}
    failed = run(reg.execute(ToolCall("get_forecast", {"city": "Nowhere"})))
    assert failed.error == "City 'Nowhere' not found" and failed.error_kind is ErrorKind.EXECUTION_ERROR
    assert provider.history == [("get_forecast", {"city": "Paris", "days": 2}), ("get_forecast", {"city": "Nowhere"})]


def test_function_provider_through_the_registry():
    provider = FunctionToolProvider(tier="crawl")

    @provider.tool
    def greet(name: str, excited: bool = False) -> str:
        """Say hello."""
        return f"Hello {name}{'!' if excited else '.'}"

    @provider.tool(tier="run", name="shout")
    async def loud(text: str) -> str:
        return text.upper()

    reg = ToolRegistry()
    run(reg.add_provider(provider))
    assert reg.list_tool_names(available_only=True) == ["greet"]
    assert run(reg.execute(ToolCall("greet", {"name": "Ada", "excited": "true"}))).result == "Hello Ada!"
    reg.unlock("run")
    assert run(reg.execute(ToolCall("shout", {"text": "hi"}))).result == "HI"


def test_object_without_provider_methods_is_refused():
    with pytest.raises(TypeError, match="no list_tools"):
        run(ToolRegistry().add_provider(object()))
