"""One registry pattern for everything chosen by name: metrics, judges, providers, report and
dataset formats.

A `Registry` maps names to factories (a metric class, a judge factory, a provider adapter class,
a reporter object). A factory may be registered as the object itself or as a lazy
"module:attribute" string, imported the first time the name is looked up, so an optional
backend is imported only by those who choose it.

Installed packages add names through an entry-point group (`vera.metrics`, `vera.judges`,
`vera.providers`, `vera.reporters`, `vera.dataset_formats`; see docs/plugins.md). Plugins are
loaded when a name is not built in and before any listing, so `names()` always shows them.
Loading follows what is installed now: each load enumerates the group again (about a
millisecond) but imports each entry point only once; `reset_plugins()` forgets the imported
ones, for tests that install and remove plugins.

A plugin may have its own table in the config file, `[plugins.NAME]`, kept as plain values in
`PluginTables.plugins`. The component it names declares the table's model as a class
attribute, `options_model` (a pydantic model); `plugin_options` validates the table against it
and the registry hands the validated object to the component as the keyword `options=`.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterable, Mapping
from importlib.metadata import EntryPoint, entry_points
from typing import Any, Generic, TypeVar, cast

from pydantic import BaseModel, Field, ValidationError, field_validator

from vera._types._errors import ConfigError

T = TypeVar("T")

EntryPointSource = Callable[[str], Iterable[EntryPoint]]
"""Where a registry finds its plugins: entry-point group name → its entry points."""

_PluginKey = tuple[str, str, str]


def normalise_name(name: str) -> str:
    """The default lookup key: surrounding space removed, lower-cased."""
    return name.strip().lower()


def installed_entry_points(group: str) -> list[EntryPoint]:
    """The entry points installed distributions declare in `group`."""
    return list(entry_points(group=group))


def import_object(target: str) -> object:
    """The object a "module:attribute" string names (the attribute may be dotted)."""
    module_name, sep, attribute = target.partition(":")
    if not sep or not module_name.strip() or not attribute.strip():
        raise ConfigError(f"lazy factory {target!r} must look like 'module:attribute'")
    found: object = importlib.import_module(module_name.strip())
    for part in attribute.strip().split("."):
        found = getattr(found, part)
    return found


def _distribution(entry: EntryPoint) -> str:
    """The name of the package that declares `entry`, for error messages."""
    dist = getattr(entry, "dist", None)
    name = getattr(dist, "name", None) if dist is not None else None
    return str(name) if name else "an unknown package"


class Registry(Generic[T]):
    """Names → factories of one kind, with lazy imports, plugins and did-you-mean errors.

    `kind` labels the things in messages ("metric", "judge"); `group` is the entry-point group
    plugins use. `normalise` turns a user's name into the lookup key. `entries` may be an
    existing dict to keep the registered (non-lazy) factories in, so an older public dict stays
    live; `discover` finds the entry points of a group (tests may substitute it).
    """

    def __init__(
        self,
        kind: str,
        group: str,
        *,
        normalise: Callable[[str], str] = normalise_name,
        entries: dict[str, T] | None = None,
        discover: EntryPointSource = installed_entry_points,
    ) -> None:
        self.kind = kind
        self.group = group
        self._normalise = normalise
        self._entries: dict[str, T] = {} if entries is None else entries
        self._lazy: dict[str, str] = {}
        self._order: dict[str, None] = dict.fromkeys(self._entries)
        self._aliases: dict[str, str] = {}
        self._discover = discover
        self._plugins: dict[str, T] = {}
        self._imported: dict[_PluginKey, T] = {}

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {self.group!r})"

    def key(self, name: str) -> str:
        """The lookup key of `name` (normalised; an alias resolved to its name)."""
        key = self._normalise(name)
        return self._aliases.get(key, key)

    def register(self, name: str, factory: T | str, *, aliases: Iterable[str] = ()) -> None:
        """Offer `factory` under `name` (and `aliases`); a "module:attribute" string is imported
        on first use. Registering the same factory again is allowed; a different one under a
        name (or alias) already taken raises `ConfigError`."""
        key = self._normalise(name)
        if not key:
            raise ConfigError(f"a {self.kind} needs a non-empty name")
        alias_keys = [self._normalise(alias) for alias in aliases]
        for taken in (key, *alias_keys):
            if not self._free(taken, key, factory):
                raise ConfigError(f"a {self.kind} named {taken!r} is already registered")
        if isinstance(factory, str):
            if ":" not in factory:
                raise ConfigError(f"lazy factory {factory!r} must look like 'module:attribute'")
            if self._lazy.get(key) != factory:
                self._lazy[key] = factory
                self._entries.pop(key, None)
        else:
            self._entries[key] = factory
        self._order[key] = None
        self._aliases.update(dict.fromkeys(alias_keys, key))

    def _free(self, name: str, key: str, factory: T | str) -> bool:
        """Whether `name` (the key itself or one of its aliases) may stand for `factory`, as
        registered under `key`: free, or already standing for the same factory."""
        if name != key:
            return (
                name not in self._entries
                and name not in self._lazy
                and (self._aliases.get(name, key) == key)
            )
        if key in self._aliases:
            return False
        if key in self._lazy:
            return isinstance(factory, str) and factory == self._lazy[key]
        return key not in self._entries or self._entries[key] is factory

    def builtin_names(self) -> list[str]:
        """The names registered in this process, in registration order, without plugins."""
        names = [name for name in self._order if name in self._entries or name in self._lazy]
        return names + [name for name in self._entries if name not in self._order]

    def names(self) -> list[str]:
        """Every name: the registered ones in registration order, then plugins by name."""
        self.load_plugins()
        builtin = self.builtin_names()
        return builtin + sorted(name for name in self._plugins if name not in builtin)

    def aliases(self) -> dict[str, str]:
        """Alias → the name it stands for."""
        return dict(self._aliases)

    def __contains__(self, name: object) -> bool:
        if not isinstance(name, str):
            return False
        key = self.key(name)
        if key in self._entries or key in self._lazy:
            return True
        self.load_plugins()
        return key in self._plugins

    def find(self, name: str) -> T | None:
        """The factory `name` stands for, or None; plugins are loaded when it is not built in."""
        key = self.key(name)
        builtin = self._builtin(key)
        if builtin is not None:
            return builtin
        self.load_plugins()
        return self._plugins.get(key)

    def get(self, name: str) -> T:
        """The factory `name` stands for; `ConfigError` with suggestions when there is none."""
        found = self.find(name)
        if found is None:
            raise self.unknown(name)
        return found

    def _builtin(self, key: str) -> T | None:
        """The registered factory under `key`, importing a lazy one now."""
        if key in self._entries:
            return self._entries[key]
        if key in self._lazy:
            loaded = cast("T", import_object(self._lazy[key]))
            self._entries[key] = loaded
            return loaded
        return None

    def unknown(
        self,
        name: str,
        *,
        within: str | None = None,
        also: Iterable[str] = (),
        known: str | None = None,
    ) -> ConfigError:
        """The error for a name that stands for nothing: "unknown KIND 'x' [in 'spec']; did you
        mean 'y'? Known: ...". Suggestions come from every name, alias and `also`; `within` is
        the spec the name came from, and `known` replaces the sorted list of known names."""
        names = self.names()
        candidates = [*names, *self._aliases, *also]
        close = difflib.get_close_matches(self._normalise(name), candidates, n=1)
        head = f"unknown {self.kind} {name.strip()!r}"
        if within is not None and within.strip() != name.strip():
            head += f" in {within.strip()!r}"
        head += f"; did you mean {close[0]!r}?" if close else "."
        return ConfigError(f"{head} Known: {known or ', '.join(sorted(names))}")

    def load_plugins(self) -> None:
        """Load the group's installed entry points (each imported once); `ConfigError` names the
        entry point and its package when one fails to import or clashes with another name."""
        found: dict[str, tuple[T, EntryPoint]] = {}
        for entry in self._discover(self.group):
            key = self._normalise(entry.name)
            loaded = self._import(entry)
            clash = self._builtin(key) if key in self._entries or key in self._lazy else None
            earlier = found.get(key)
            if (clash is not None and clash is not loaded) or key in self._aliases:
                raise ConfigError(
                    f"{self.kind} plugin {entry.name!r} ({entry.value}) from "
                    f"{_distribution(entry)} takes the name of a built-in {self.kind}"
                )
            if earlier is not None and earlier[0] is not loaded:
                raise ConfigError(
                    f"two {self.kind} plugins are named {key!r}: {earlier[1].value} from "
                    f"{_distribution(earlier[1])} and {entry.value} from {_distribution(entry)}"
                )
            found[key] = (loaded, entry)
        self._plugins = {key: value for key, (value, _) in found.items()}

    def _import(self, entry: EntryPoint) -> T:
        """The object `entry` names, imported once per entry point."""
        memo = (entry.name, entry.value, _distribution(entry))
        if memo in self._imported:
            return self._imported[memo]
        try:
            loaded = cast("T", entry.load())
        except Exception as exc:  # a plugin may fail in any way; say which one failed
            raise ConfigError(
                f"cannot load {self.kind} plugin {entry.name!r} ({entry.value}) from "
                f"{_distribution(entry)}: {type(exc).__name__}: {exc}"
            ) from exc
        self._imported[memo] = loaded
        return loaded

    def reset_plugins(self) -> None:
        """Forget loaded plugins and the imported entry points, so the next lookup loads them
        afresh (for tests that install or remove plugins)."""
        self._plugins = {}
        self._imported.clear()


PLUGIN_GROUPS = (
    "vera.metrics",
    "vera.judges",
    "vera.providers",
    "vera.reporters",
    "vera.dataset_formats",
    "vera.executors",
)
"""Every entry-point group a plugin may be installed under."""

CONFIGURABLE_GROUPS = frozenset({"vera.metrics", "vera.judges"})
"""The groups whose plugins are handed their `[plugins.NAME]` table: a judge factory is called
with `options=`, a metric class built with `options=`. Reporters, dataset formats, providers and
executors are built without `options=`, so a table for one is refused rather than ignored."""


def _table_key(name: str) -> str:
    """The key a `[plugins.NAME]` table and a plugin name are matched by ("-" read as "_")."""
    return name.strip().lower().replace("-", "_")


class PluginTables(BaseModel):
    """The `[plugins.NAME]` tables of the config file: plugin name -> its values, unvalidated
    here (the plugin's `options_model` validates them where the plugin is built)."""

    plugins: dict[str, dict[str, Any]] = Field(default_factory=dict)
    """`[plugins.NAME]` (or `[tool.vera.plugins.NAME]`): each plugin's own options."""

    @field_validator("plugins", mode="before")
    @classmethod
    def _tables(cls, value: object) -> object:
        if not isinstance(value, dict):
            raise ValueError("expected tables [plugins.NAME]")
        for name, table in value.items():
            if not isinstance(table, dict):
                raise ValueError(f"[plugins.{name}] must be a table, got {type(table).__name__}")
        return value


def plugin_table(tables: Mapping[str, Mapping[str, Any]], name: str) -> dict[str, Any] | None:
    """The table `[plugins.NAME]` for the plugin `name`, or None when there is none."""
    key = _table_key(name)
    found = [dict(table) for given, table in tables.items() if _table_key(given) == key]
    return found[-1] if found else None


def _options_model(component: object, name: str) -> type[BaseModel] | None:
    """The pydantic model `component` declares as `options_model`, or None."""
    model = getattr(component, "options_model", None)
    if model is None:
        return None
    if not (isinstance(model, type) and issubclass(model, BaseModel)):
        raise ConfigError(
            f"plugin {name!r}: options_model must be a pydantic model class, "
            f"got {type(model).__name__}"
        )
    return model


def plugin_options(
    component: object,
    name: str,
    table: Mapping[str, Any] | None,
    *,
    origin: str = "the settings",
) -> BaseModel | None:
    """`table` validated against `component.options_model`, or None when it declares none.

    A component without a model refuses a table; a value its model refuses is a
    `ConfigError` naming `origin` (the config file), the table and the field."""
    model = _options_model(component, name)
    if model is None:
        if table is not None:
            raise ConfigError(
                f"{origin}: [plugins.{name}]: plugin {name!r} takes no options (it declares no "
                "options_model); remove the table"
            )
        return None
    try:
        return model.model_validate(dict(table or {}))
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(part) for part in error["loc"]) or "(the table)"
        reason = str(error["msg"]).removeprefix("Value error, ")
        raise ConfigError(f"{origin}: [plugins.{name}] field '{field}': {reason}") from None


def _installed_plugins(discover: EntryPointSource) -> dict[str, list[EntryPoint]]:
    """Every installed plugin's entry points, by table key, across `PLUGIN_GROUPS`."""
    found: dict[str, list[EntryPoint]] = {}
    for group in PLUGIN_GROUPS:
        for entry in discover(group):
            found.setdefault(_table_key(entry.name), []).append(entry)
    return found


def _load(entry: EntryPoint) -> object:
    try:
        return cast("object", entry.load())
    except Exception as exc:  # a plugin may fail in any way; say which one failed
        raise ConfigError(
            f"cannot load plugin {entry.name!r} ({entry.value}) from {_distribution(entry)}: "
            f"{type(exc).__name__}: {exc}"
        ) from exc


def check_plugin_tables(
    tables: Mapping[str, Mapping[str, Any]],
    *,
    origin: str,
    discover: EntryPointSource = installed_entry_points,
    built_in: Mapping[str, object] | None = None,
) -> None:
    """Check every `[plugins.NAME]` table: it names an installed plugin (else `ConfigError`
    listing the installed ones) and its values pass that plugin's `options_model`. `built_in`
    names the built-in components that take a table too (a metric with an `options_model`)."""
    if not tables:
        return
    installed = _installed_plugins(discover)
    own = {_table_key(name): component for name, component in (built_in or {}).items()}
    for name, table in tables.items():
        if _table_key(name) in own:
            plugin_options(own[_table_key(name)], name, table, origin=origin)
            continue
        entries = installed.get(_table_key(name))
        if not entries:
            known = ", ".join(sorted({e.name for found in installed.values() for e in found}))
            raise ConfigError(
                f"{origin}: [plugins.{name}] names no installed plugin. "
                f"Installed plugins: {known or 'none'} (see docs/plugins.md)"
            )
        configurable = [entry for entry in entries if entry.group in CONFIGURABLE_GROUPS]
        if not configurable:
            raise ConfigError(
                f"{origin}: [plugins.{name}]: plugin {entries[0].name!r} is a "
                f"{entries[0].group} plugin, and only judge and metric plugins "
                "(vera.judges, vera.metrics) are given their table yet; remove the table"
            )
        for entry in configurable:
            plugin_options(_load(entry), name, table, origin=origin)
