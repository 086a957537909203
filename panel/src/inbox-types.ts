/** What the inbox reads from the REST routes (src/schemas/message.ts). */
export interface Chat {
  chatId: string;
  name?: string;
  isGroup: boolean;
  lastMessageAt: string;
  unread: number;
  handover: boolean;
}
export interface Handover {
  phone: string | null;
  chatId: string;
  fromName: string | null;
  openedAt: string;
  expiresAt: string;
  claimedBy: string | null;
}
export interface Message {
  messageId: string;
  chatId: string;
  fromMe: boolean;
  /** The sender's phone (null for our own messages, or a LID the gateway cannot map). */
  from?: string | null;
  /** The sender's JID or LID. */
  sender?: string | null;
  fromName?: string;
  text?: string;
  caption?: string;
  timestamp: string;
  type: string;
  status?: string;
  deleted?: boolean;
  media?: { mimetype: string; size: number; fileName?: string; url: string | null };
}
export interface Found {
  chats: Chat[];
  messages: Array<{ messageId: string; chatId: string; fromMe: boolean; fromName?: string; text?: string; caption?: string; timestamp: string }>;
}
