"""Users and their API keys (`Store.users`): who may use `toolbridge serve` once any user exists.

A key is `tbk_<prefix>_<secret>`: the prefix (8 hex characters) finds its row and is safe to show; the
secret is 32 random bytes. The store keeps only SHA-256 of the whole key. A slow KDF (argon2, bcrypt)
protects low-entropy passwords from guessing; a 256-bit random secret cannot be guessed, so a fast hash
is as safe and keeps checking a key on every request cheap.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import datetime, timedelta

from sqlalchemy import Connection, and_, case, delete, func, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from toolbridge._values import readable_text
from toolbridge.store._errors import StoreError
from toolbridge.store._records import _Record
from toolbridge.store._schema import (
    ApiKeyRow,
    ChatRow,
    ModelUsageRow,
    StoredResponseRow,
    ToolCallRow,
    UserRequestRow,
    UserRow,
    utcnow,
)

__all__ = [
    "KEY_PREFIX",
    "ApiKeyRecord",
    "KeyNotFoundError",
    "KeyOwner",
    "ModelUsage",
    "TokenCount",
    "UserDirectory",
    "UserExistsError",
    "UserNotFoundError",
    "UserRecord",
]

KEY_PREFIX = "tbk_"
_KEY_SHAPE = re.compile(r"^tbk_([0-9a-f]{8})_[A-Za-z0-9_-]{20,}$")
_USER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,199}$")
LAST_USED_GRANULARITY = timedelta(minutes=1)
"""`last_used_at` is written at most this often per key: a write per request would cost more than it says."""

Sessions = Callable[[], AbstractContextManager[Session]]
Connections = Callable[[], AbstractContextManager[Connection]]


class UserNotFoundError(StoreError):
    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"no user named {name!r}; `toolbridge users list` lists them")


class UserExistsError(StoreError):
    def __init__(self, name: str) -> None:
        self.name = name
        super().__init__(f"a user named {name!r} already exists; pick another name")


class KeyNotFoundError(StoreError):
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        super().__init__(f"no key with prefix {prefix!r}; `toolbridge access-keys list` shows the prefixes")


class UserRecord(_Record):
    name: str
    admin: bool
    created_at: datetime
    keys: int
    """Keys not revoked."""


class ApiKeyRecord(_Record):
    prefix: str
    label: str | None
    user: str
    created_at: datetime
    last_used_at: datetime | None
    revoked_at: datetime | None


class ModelUsage(_Record):
    """Model tokens of a user's runs (those in flight so far)."""

    runs: int
    input_tokens: int
    output_tokens: int


class TokenCount(_Record):
    """A user's model tokens of the day: charged to their runs, and held back by their runs in flight."""

    charged: int
    held: int

    @property
    def total(self) -> int:
        return self.charged + self.held


class KeyOwner(_Record):
    """Who a request's key belongs to."""

    user_id: int
    name: str
    admin: bool


def _hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class UserDirectory:
    """Users and keys, over the store's read and write sessions."""

    def __init__(self, read: Sessions, write: Sessions, lookup: Connections) -> None:
        self._read = read
        self._write = write
        self._lookup = lookup

    def any(self) -> bool:
        """Whether any user exists: then `toolbridge serve` asks every request for a key (so it reads
        without an ORM session, which would cost more than the query)."""
        with self._lookup() as connection:
            return connection.scalar(select(UserRow.id).limit(1)) is not None

    def add(self, name: str, *, admin: bool = False) -> UserRecord:
        if not _USER_NAME.match(name):
            raise StoreError(
                f"{name!r} is not a usable user name: use letters, digits and . _ @ - (up to 200), "
                "starting with a letter or digit"
            )
        try:
            with self._write() as session:
                row = UserRow(name=name, admin=admin)
                session.add(row)
                session.flush()
                return UserRecord(name=name, admin=admin, created_at=row.created_at, keys=0)
        except IntegrityError:
            raise UserExistsError(name) from None

    def all(self) -> list[UserRecord]:
        live_keys = (
            select(func.count())
            .where(ApiKeyRow.user_id == UserRow.id, ApiKeyRow.revoked_at.is_(None))
            .correlate(UserRow)
            .scalar_subquery()
        )
        with self._read() as session:
            rows = session.execute(select(UserRow, live_keys).order_by(UserRow.name))
            return [
                UserRecord(name=user.name, admin=user.admin, created_at=user.created_at, keys=keys)
                for user, keys in rows
            ]

    def remove(self, name: str) -> None:
        """Remove the user and their keys; their chats and logged calls stay, seen by admins only."""
        with self._write() as session:
            user = _user(session, name)
            for key in session.scalars(select(ApiKeyRow).where(ApiKeyRow.user_id == user.id)):
                session.delete(key)  # explicitly: SQLite without enforced FKs would keep them
            # Their stored responses go too: a later user given the same id must not find them.
            session.execute(delete(StoredResponseRow).where(StoredResponseRow.user_id == user.id))
            # No foreign keys point here from chats and calls (see migration 0005): cleared by hand.
            for table in (ChatRow, ToolCallRow, ModelUsageRow):
                session.execute(update(table).where(table.user_id == user.id).values(user_id=None))
            session.delete(user)

    def create_key(self, user: str, *, label: str | None = None) -> tuple[str, ApiKeyRecord]:
        """A new key for `user`: the key itself (shown once, never stored) and its record."""
        prefix = secrets.token_hex(4)
        key = f"{KEY_PREFIX}{prefix}_{secrets.token_urlsafe(32)}"
        with self._write() as session:
            owner = _user(session, user)
            row = ApiKeyRow(
                user_id=owner.id,
                prefix=prefix,
                secret_hash=_hash(key),
                label=readable_text(label) if label is not None else None,
            )
            session.add(row)
            session.flush()
            return key, _key_record(row, owner.name)

    def keys(self, user: str | None = None) -> list[ApiKeyRecord]:
        query = select(ApiKeyRow, UserRow.name).join(UserRow).order_by(ApiKeyRow.created_at, ApiKeyRow.id)
        with self._read() as session:
            if user is not None:
                query = query.where(ApiKeyRow.user_id == _user(session, user).id)
            return [_key_record(key, name) for key, name in session.execute(query)]

    def revoke_key(self, prefix: str) -> ApiKeyRecord:
        prefix = prefix.removeprefix(KEY_PREFIX).split("_")[0]
        with self._write() as session:
            found = session.execute(
                select(ApiKeyRow, UserRow.name).join(UserRow).where(ApiKeyRow.prefix == prefix)
            ).first()
            if found is None:
                raise KeyNotFoundError(prefix)
            key, name = found
            key.revoked_at = key.revoked_at or utcnow()
            return _key_record(key, name)

    def owner_of(self, key: str) -> KeyOwner | None:
        """The user a live key belongs to; None for a key that is malformed, unknown or revoked."""
        shape = _KEY_SHAPE.match(key)
        if shape is None:
            return None
        with self._read() as session:
            found = session.execute(
                select(ApiKeyRow, UserRow).join(UserRow).where(ApiKeyRow.prefix == shape.group(1))
            ).first()
        if found is None:
            return None
        row, user = found
        if row.revoked_at is not None or not hmac.compare_digest(row.secret_hash, _hash(key)):
            return None
        now = utcnow()
        if row.last_used_at is None or now - row.last_used_at >= LAST_USED_GRANULARITY:
            try:
                with self._write() as session:
                    session.execute(update(ApiKeyRow).where(ApiKeyRow.id == row.id).values(last_used_at=now))
            except StoreError:
                pass  # on the side: the store logs a failed write once per outage, and the key stays good
        return KeyOwner(user_id=user.id, name=user.name, admin=user.admin)

    def reserve_tokens(
        self, user_id: int, *, limit: int | None, tokens: int, since: datetime, fresh_after: datetime
    ) -> int | TokenCount:
        """Admit a run of user `user_id`: unless the tokens counted for them (`tokens_counted`) reach
        `limit`, write the run's usage row holding back `tokens` (at most what is left of `limit`) and
        return its id for `charge_tokens` and `release_tokens`. Refused: their count, nothing written.

        The user's row is locked while counting (SQLite: the write transaction is exclusive anyway), so
        runs admitted at once, on any replica, each see the others' holds."""
        with self._write() as session:
            session.execute(select(UserRow.id).where(UserRow.id == user_id).with_for_update())
            held = 0
            if limit is not None:
                counted = self._counted(session, user_id, since=since, fresh_after=fresh_after)
                if counted.total >= limit:
                    return counted
                held = min(tokens, limit - counted.total)
            row = ModelUsageRow(user_id=user_id, input_tokens=0, output_tokens=0, reserved_tokens=held)
            session.add(row)
            session.flush()
            return row.id

    def charge_tokens(self, usage_id: int, *, input_tokens: int, output_tokens: int) -> None:
        """Add one model request's tokens to its run's row; they replace as much of the run's hold."""
        spent = input_tokens + output_tokens
        reserved = ModelUsageRow.reserved_tokens
        with self._write() as session:
            session.execute(
                update(ModelUsageRow)
                .where(ModelUsageRow.id == usage_id)
                .values(
                    input_tokens=ModelUsageRow.input_tokens + input_tokens,
                    output_tokens=ModelUsageRow.output_tokens + output_tokens,
                    reserved_tokens=case((reserved > spent, reserved - spent), else_=0),
                    finished_at=utcnow(),
                )
            )

    def release_tokens(self, usage_id: int) -> None:
        """The run ended: its hold is given back (a run that used no tokens leaves no row)."""
        row = ModelUsageRow
        with self._write() as session:
            unused = (row.id == usage_id, row.input_tokens == 0, row.output_tokens == 0)
            session.execute(delete(row).where(*unused))
            session.execute(update(row).where(row.id == usage_id).values(reserved_tokens=0))

    def tokens_counted(
        self, user_id: int, *, since: datetime, fresh_after: datetime, excluding: int | None = None
    ) -> TokenCount:
        """The model tokens charged to the user since `since`, plus those held back by their runs in
        flight admitted or charged since then and after `fresh_after` (an older hold is a run's that
        died with its replica), but for the run `excluding`'s own hold."""
        with self._read() as session:
            return self._counted(session, user_id, since=since, fresh_after=fresh_after, excluding=excluding)

    @staticmethod
    def _counted(
        session: Session,
        user_id: int,
        *,
        since: datetime,
        fresh_after: datetime,
        excluding: int | None = None,
    ) -> TokenCount:
        row = ModelUsageRow
        holding = row.finished_at > fresh_after
        if excluding is not None:
            holding = and_(holding, row.id != excluding)
        charged = func.sum(row.input_tokens + row.output_tokens)
        held = func.sum(case((holding, row.reserved_tokens), else_=0))
        query = select(charged, held).where(row.user_id == user_id, row.finished_at >= since)
        charged_tokens, held_tokens = session.execute(query).one()
        return TokenCount(charged=int(charged_tokens or 0), held=int(held_tokens or 0))

    def usage(self, user_id: int, *, since: datetime | None = None) -> ModelUsage:
        """The user's runs and model tokens since `since` (None: ever)."""
        window = [ModelUsageRow.finished_at >= since] if since is not None else []
        query = select(
            func.count(), func.sum(ModelUsageRow.input_tokens), func.sum(ModelUsageRow.output_tokens)
        ).where(ModelUsageRow.user_id == user_id, *window)
        with self._read() as session:
            runs, tokens_in, tokens_out = session.execute(query).one()
        return ModelUsage(runs=runs, input_tokens=int(tokens_in or 0), output_tokens=int(tokens_out or 0))

    def count_request(self, name: str, *, limit: int, window: timedelta) -> datetime | None:
        """Count a request of user `name` that starts a run, unless `limit` of theirs were counted in the
        last `window`: then nothing is counted and the answer is when the oldest of those was (the limit
        frees up `window` after it). None: counted.

        Every replica on the database counts into the same rows; the user's row is locked while counting
        (SQLite: the write transaction is exclusive anyway), so concurrent requests on several replicas
        never all slip under the limit. Each user keeps at most `limit` rows: older ones are deleted here."""
        now = utcnow()
        recent = (UserRequestRow.user_name == name, UserRequestRow.at > now - window)
        with self._write() as session:
            session.execute(select(UserRow.id).where(UserRow.name == name).with_for_update())
            session.execute(
                delete(UserRequestRow).where(
                    UserRequestRow.user_name == name, UserRequestRow.at <= now - window
                )
            )
            count, oldest = session.execute(
                select(func.count(), func.min(UserRequestRow.at)).where(*recent)
            ).one()
            if count >= limit:
                return oldest
            session.add(UserRequestRow(user_name=name, at=now))
            return None

    def user_id(self, name: str) -> int:
        with self._read() as session:
            return _user(session, name).id

    def name_of(self, user_id: int) -> str | None:
        """The name of user `user_id`; None once they were removed."""
        with self._read() as session:
            return session.scalar(select(UserRow.name).where(UserRow.id == user_id))


def _user(session: Session, name: str) -> UserRow:
    user = session.scalar(select(UserRow).where(UserRow.name == name))
    if user is None:
        raise UserNotFoundError(name)
    return user


def _key_record(row: ApiKeyRow, user: str) -> ApiKeyRecord:
    return ApiKeyRecord(
        prefix=row.prefix,
        label=row.label,
        user=user,
        created_at=row.created_at,
        last_used_at=row.last_used_at,
        revoked_at=row.revoked_at,
    )
