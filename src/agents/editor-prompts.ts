/**
 * The prompt templates RAGFlow's agent editor offers (`GET /agents/prompts`), under RAGFlow's keys.
 * The texts are Cairn's own: an editor pastes them into an Agent's system prompt and edits them.
 */
export const EDITOR_PROMPTS = {
  task_analysis: [
    'Before acting, work out what the user needs.',
    '1. Restate the request in one sentence, in your own words.',
    '2. List what you already know from the conversation and what is still missing.',
    '3. Name the tools that could fill each gap, and what you would ask each of them.',
    '4. Say how you will know the task is done.',
    'Keep the analysis short: it is a plan for you, not an answer for the user.',
    '',
    'Request: {sys.query}',
  ].join('\n'),
  plan_generation: [
    'Decide the single next step.',
    'If the information gathered so far answers the request, reply with the final answer and call no tool.',
    'Otherwise choose one tool, give it precise arguments (a search query should be a full, specific question), and say in one line what you expect to learn from it.',
    'Never call the same tool with the same arguments twice.',
  ].join('\n'),
  reflection: [
    'Look back at the last tool result before going on.',
    '- Did it answer what was asked of it? If not, why not: a poor query, the wrong tool, or no such information?',
    '- Does anything in it contradict what you believed before?',
    '- What is the best next move: answer now, ask again with a better query, try another tool, or tell the user what is missing?',
    'Write two or three sentences, then continue.',
  ].join('\n'),
  citation_guidelines: [
    'Support each statement drawn from the retrieved passages with a citation.',
    '- Put the marker right after the sentence it supports, written as [ID:n] where n is the passage number shown with the passage.',
    '- Cite only passages that really say what the sentence states; do not cite for general knowledge.',
    '- Use at most four markers per sentence, and never invent a passage number.',
    '- When the passages do not contain the answer, say so instead of citing.',
  ].join('\n'),
};
