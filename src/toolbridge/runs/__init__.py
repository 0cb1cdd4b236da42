"""Durable runs: a chat's run as rows every replica sharing the database can follow.

The ledger (`ledger`) holds runs, their events and signals; `notices` and `notifier` tell other replicas
where to look; the owner writes its run's events (`writer`) and keeps its lease (`keeper`); every
replica's streams read the events (`feed`); `channels` is one chat's live side on a replica; `recorder`
writes the chat's messages down as the run goes. Above the store, below the server.
"""
