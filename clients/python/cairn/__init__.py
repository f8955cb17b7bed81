"""Cairn Python client: ``from cairn import Client`` (``RAGFlow`` is an alias, for code written for ragflow_sdk)."""

from .agent import Agent
from .chat import Chat
from .chunk import Chunk
from .client import Client, RAGFlow
from .dataset import DataSet
from .document import Document
from .errors import CairnError, ChunkUpdateError
from .memory import Memory, MessagesAdded
from .message import Message
from .session import Session

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "CairnError",
    "Chat",
    "ChunkUpdateError",
    "Chunk",
    "Client",
    "DataSet",
    "Document",
    "Memory",
    "Message",
    "MessagesAdded",
    "RAGFlow",
    "Session",
]
