import type { MetaStore } from '../store/index.js';
import type { SessionRow, StoredMessage } from '../store/sessions.js';
import type { ChatRow } from '../store/chats.js';
import type { Principal } from './auth.js';
import type { Chat, ChatService } from './chats.js';
import { partialDeleteTargets, type PartialDelete } from './delete-targets.js';
import { newId } from '../ids.js';
import { nowMs, toHttpDate, toSeconds } from '../time.js';
import { badRequest, notFound } from '../errors.js';
import { DEFAULT_SESSION_NAME } from '../chat/config.js';
import type { ListPage } from './paging.js';

export interface CreateSessionInput {
  name?: string;
  user_id?: string;
}

export interface UpdateSessionInput {
  name?: string;
  messages?: unknown;
  message?: unknown;
  reference?: unknown;
}

export interface ListSessionsInput extends ListPage<'create_time' | 'update_time' | 'name'> {
  user_id?: string;
}

/** Sessions of chat assistants: the stored conversation of one user with one chat. */
export class SessionService {
  constructor(
    private readonly store: MetaStore,
    private readonly chats: ChatService,
  ) {}

  async create(p: Principal, chatId: string, input: CreateSessionInput) {
    const chat = await this.chats.load(p, chatId);
    return this.view(await this.open(chat, input));
  }

  /** A new session whose opening message is the chat's prologue. */
  async open(chat: Chat, input: CreateSessionInput): Promise<SessionRow> {
    const now = nowMs();
    const prologue = chat.promptConfig.prologue;
    const messages: StoredMessage[] = prologue ? [{ id: newId(), role: 'assistant', content: prologue, created_at: now / 1000 }] : [];
    const row: SessionRow = {
      id: newId(),
      chat_id: chat.row.id,
      name: checkName(input.name ?? DEFAULT_SESSION_NAME),
      user_id: input.user_id ?? '',
      messages: JSON.stringify(messages),
      create_time: now,
      update_time: now,
    };
    await this.store.sessions.insert(row);
    return row;
  }

  /** A session of one of the caller's chats, or 404. */
  async get(p: Principal, chatId: string, sessionId: string): Promise<SessionRow> {
    const chat = await this.chats.get(p, chatId);
    return this.ofChat(chat, sessionId);
  }

  async view(row: SessionRow, chat?: ChatRow) {
    const messages = this.messages(row);
    return {
      id: row.id,
      chat_id: row.chat_id,
      name: row.name,
      messages,
      message: messages,
      reference: messages.filter((m) => m.reference).map((m) => m.reference),
      user_id: row.user_id,
      ...(chat ? { avatar: chat.icon } : {}),
      create_time: toSeconds(row.create_time),
      create_date: toHttpDate(row.create_time),
      update_time: toSeconds(row.update_time),
      update_date: toHttpDate(row.update_time),
    };
  }

  async getView(p: Principal, chatId: string, sessionId: string) {
    const chat = await this.chats.get(p, chatId);
    return this.view(await this.ofChat(chat, sessionId), chat);
  }

  async list(p: Principal, chatId: string, input: ListSessionsInput) {
    const chat = await this.chats.get(p, chatId);
    const rows = await this.store.sessions.list({
      chatId: chat.id,
      id: input.id,
      name: input.name,
      userId: input.user_id,
      orderBy: input.orderby,
      desc: input.desc,
      offset: (input.page - 1) * input.page_size,
      limit: input.page_size,
    });
    return Promise.all(rows.map((r) => this.view(r)));
  }

  /** Only the name can change; the conversation itself is written by conversation turns. */
  async update(p: Principal, chatId: string, sessionId: string, input: UpdateSessionInput) {
    const session = await this.get(p, chatId, sessionId);
    for (const key of ['messages', 'message', 'reference'] as const) {
      if (input[key] !== undefined) throw badRequest(`\`${key}\` cannot be changed: a session's conversation is written by the completion routes`);
    }
    if (input.name !== undefined) await this.store.sessions.rename(session.id, checkName(input.name), nowMs());
    return this.view((await this.store.sessions.byId(session.id))!);
  }

  /** Partial: valid ids go, the others are reported in `errors`; an error only when none goes. */
  async delete(p: Principal, chatId: string, ids: string[] | null | undefined, deleteAll: boolean): Promise<PartialDelete> {
    const chat = await this.chats.get(p, chatId);
    const { targets, errors } = await partialDeleteTargets(ids, deleteAll, (id) => this.ofChat(chat, id), () => this.store.sessions.idsOfChat(chat.id));
    await this.store.sessions.delete(targets);
    return { success_count: targets.length, errors };
  }

  messages(row: SessionRow): StoredMessage[] {
    return JSON.parse(row.messages) as StoredMessage[];
  }

  async append(sessionId: string, messages: StoredMessage[]): Promise<void> {
    await this.store.sessions.appendMessages(sessionId, messages, nowMs());
  }

  private async ofChat(chat: ChatRow, sessionId: string): Promise<SessionRow> {
    const row = await this.store.sessions.byId(sessionId);
    if (!row || row.chat_id !== chat.id) throw notFound(`Session '${sessionId}' not found in chat ${chat.id}`);
    return row;
  }
}

function checkName(raw: string): string {
  const name = raw.trim();
  if (!name) throw badRequest('`name` must not be blank');
  return name;
}
