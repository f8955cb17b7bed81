/**
 * The extraction prompts of a memory (pure: no I/O).
 *
 * A memory's system prompt is assembled from its types: an introduction, one section per extracted
 * type the memory keeps (semantic, episodic, procedural; raw needs no extraction), then two fixed parts,
 * OUTPUT REQUIREMENTS and OUTPUT FORMAT, which the extraction step relies on to parse the model's answer.
 * Users may rewrite everything else; an edit that changes a fixed part is rejected (checkSystemPrompt).
 */
import { EXTRACTED_TYPES, MAX_ITEMS_PER_TYPE, type ExtractedType, type MemoryType } from './types.js';

const INTRODUCTION = `You are the memory of an AI agent. You read one exchange between a user and the agent and write down what is worth remembering for later conversations.
Only record what the conversation states or clearly implies; never invent facts. Write each memory item as one self-contained sentence that can be understood without the conversation (name people and things instead of using pronouns).`;

const TYPE_SECTIONS: Record<ExtractedType, string> = {
  semantic: `### SEMANTIC MEMORY
Facts and knowledge that stay true beyond this conversation: who the user is, their preferences, the people, places, objects and concepts they mention, and the relations between them.
Example: "The user's daughter is called Mia and is allergic to peanuts."`,
  episodic: `### EPISODIC MEMORY
Events and experiences: what happened, to whom, when and where, including what was decided or promised in this conversation. Keep the time of the event in valid_at.
Example: "On 2025-03-02 the user booked a flight from Oslo to Rome for 14 March."`,
  procedural: `### PROCEDURAL MEMORY
How things are done: steps, workflows, methods, rules and instructions the user gives or the agent follows, and what worked or failed.
Example: "To deploy the service, the user runs the tests first, then tags the release, then pushes the tag."`,
};

/** The fixed parts, exactly as they must appear in every system prompt. */
export const OUTPUT_REQUIREMENTS = `## OUTPUT REQUIREMENTS
- Answer with one JSON object and nothing else: no explanation, no Markdown.
- Use the keys "semantic", "episodic" and "procedural"; each holds a list of items. Leave the list of a type empty when there is nothing of that type or when the type is not requested above.
- Give at most ${MAX_ITEMS_PER_TYPE} items per type, the most important first.
- Each item has "content" (one sentence), "valid_at" (when it became true or happened) and "invalid_at" (when it stopped being true, or null).
- Write times in ISO 8601 with a time zone, e.g. "2025-03-02T14:30:00Z". When the conversation gives no time, use the conversation time for valid_at.`;

export const OUTPUT_FORMAT = `## OUTPUT FORMAT
{
  "semantic": [{"content": "...", "valid_at": "2025-03-02T14:30:00Z", "invalid_at": null}],
  "episodic": [{"content": "...", "valid_at": "2025-03-02T14:30:00Z", "invalid_at": null}],
  "procedural": [{"content": "...", "valid_at": "2025-03-02T14:30:00Z", "invalid_at": null}]
}`;

export const FIXED_PARTS = [
  { name: 'OUTPUT REQUIREMENTS', text: OUTPUT_REQUIREMENTS },
  { name: 'OUTPUT FORMAT', text: OUTPUT_FORMAT },
] as const;

/** The default system prompt of a memory with these types. */
export function assembleSystemPrompt(types: readonly MemoryType[]): string {
  const extracted = EXTRACTED_TYPES.filter((t) => types.includes(t));
  const wanted = extracted.length
    ? `## MEMORY TYPES TO EXTRACT\nExtract only these types: ${extracted.join(', ')}.\n\n${extracted.map((t) => TYPE_SECTIONS[t]).join('\n\n')}`
    : '## MEMORY TYPES TO EXTRACT\nThis memory keeps raw messages only: extract nothing and return empty lists.';
  return [INTRODUCTION, wanted, OUTPUT_REQUIREMENTS, OUTPUT_FORMAT].join('\n\n');
}

/** Line endings and trailing spaces do not count as changes. */
function normalise(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n')
    .trim();
}

/** The `## ...` heading that ends a part: the next level-2 heading, or the end of the prompt. */
const NEXT_HEADING = /\n## /;

/** The text of the part starting at its heading, up to the next level-2 heading. */
function partOf(prompt: string, heading: string): string | undefined {
  const start = prompt.indexOf(`## ${heading}`);
  if (start < 0) return undefined;
  const rest = prompt.slice(start + 3 + heading.length);
  const end = rest.search(NEXT_HEADING);
  return prompt.slice(start, start + 3 + heading.length + (end < 0 ? rest.length : end));
}

/**
 * Why an edited system prompt is not acceptable, or undefined when it is: the name of the first fixed
 * part that is missing or changed.
 */
export function fixedPartProblem(prompt: string): string | undefined {
  const text = normalise(prompt);
  for (const part of FIXED_PARTS) {
    const found = partOf(text, part.name);
    if (found === undefined) return `the ${part.name} part is missing; it must stay exactly as generated`;
    if (normalise(found) !== normalise(part.text)) return `the ${part.name} part was changed; it must stay exactly as generated`;
  }
  return undefined;
}

/** ISO 8601 in UTC without milliseconds, as the prompts show times. */
export function isoTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * The user message of an extraction: the memory's own user prompt (when set) followed by the
 * conversation and its times, or the default instruction with the same three facts.
 */
export function buildUserPrompt(input: { userPrompt?: string | null; conversation: string; conversationTime: number; now: number }): string {
  const facts = `Conversation:\n${input.conversation}\n\nConversation Time: ${isoTime(input.conversationTime)}\nCurrent Time: ${isoTime(input.now)}`;
  const custom = input.userPrompt?.trim();
  if (custom) return `${custom}\n\n${facts}`;
  return `Extract the memory items from this conversation, following the system instructions.\n\n${facts}`;
}

/** The content of a raw message (RAGFlow's format). */
export function rawContent(userInput: string, agentResponse: string): string {
  return `User Input: ${userInput}\nAgent Response: ${agentResponse}`;
}
