"""Trust: nothing a project supplies runs before the user has trusted exactly that content.

Neutral ground for the agent, the supervisor, the hooks and the fleet: one policy
(:func:`check_trust`, :func:`trust_override`), one store (:class:`TrustStore`), one way to
gather items (``_items``) and the check before every hook call (:class:`TrustPin`).
``forgeflare trust`` records the items of a project in the user's config directory (never in
the project), keyed by the project's real path; a project is trusted when every item has the
digest recorded for its path, or for any one path (a clone with the same content).
"""

from forgeflare.trust._items import agent_config_items, agent_trust_items
from forgeflare.trust._items import blind_spots
from forgeflare.trust._items import claude_items
from forgeflare.trust._items import claude_settings_items
from forgeflare.trust._items import command_item
from forgeflare.trust._items import config_items
from forgeflare.trust._items import directory_items
from forgeflare.trust._items import fleet_files
from forgeflare.trust._items import fleet_items
from forgeflare.trust._items import hooks_file_items
from forgeflare.trust._items import loosens
from forgeflare.trust._items import python_module_items
from forgeflare.trust._items import referenced_files
from forgeflare.trust._pin import TrustPin
from forgeflare.trust._policy import TRUST_ENV
from forgeflare.trust._policy import TrustCheck
from forgeflare.trust._policy import TrustError
from forgeflare.trust._policy import TrustItem
from forgeflare.trust._policy import TrustRecord
from forgeflare.trust._policy import check_trust
from forgeflare.trust._policy import fingerprint
from forgeflare.trust._policy import trust_override
from forgeflare.trust._policy import trust_command
from forgeflare.trust._policy import untrusted_message
from forgeflare.trust._review import item_meaning
from forgeflare.trust._review import GATE_KEYS, GATE_NOTE, review_lines
from forgeflare.trust._store import TrustStore
from forgeflare.trust._store import TrustStoreError
from forgeflare.trust._store import default_trust_file
from forgeflare.trust._store import parse_records
from forgeflare.trust._store import require_trust

__all__ = [
    "GATE_KEYS",
    "GATE_NOTE",
    "TRUST_ENV",
    "TrustCheck",
    "TrustError",
    "TrustItem",
    "TrustPin",
    "TrustRecord",
    "TrustStore",
    "TrustStoreError",
    "agent_config_items",
    "agent_trust_items",
    "blind_spots",
    "check_trust",
    "claude_items",
    "claude_settings_items",
    "command_item",
    "config_items",
    "default_trust_file",
    "directory_items",
    "fingerprint",
    "fleet_files",
    "fleet_items",
    "hooks_file_items",
    "item_meaning",
    "loosens",
    "parse_records",
    "python_module_items",
    "referenced_files",
    "require_trust",
    "review_lines",
    "trust_command",
    "trust_override",
    "untrusted_message",
]
