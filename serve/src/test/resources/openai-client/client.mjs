// OpenAI's JavaScript client against a qlab server: a streamed chat, then the request
// lm-evaluation-harness's local-completions model sends for log-likelihoods. Prints one JSON object.
import OpenAI from "openai";

const [baseURL, model] = process.argv.slice(2);
const client = new OpenAI({ baseURL, apiKey: "unused", maxRetries: 0 });

const stream = await client.chat.completions.create({
  model,
  messages: [{ role: "user", content: "Tell me about the sea." }],
  max_tokens: 16,
  temperature: 0,
  stream: true,
  stream_options: { include_usage: true },
});
let chat = "";
let finish = null;
let usage = null;
for await (const chunk of stream) {
  if (chunk.usage) usage = chunk.usage;
  const choice = chunk.choices[0];
  if (!choice) continue;
  chat += choice.delta?.content ?? "";
  if (choice.finish_reason) finish = choice.finish_reason;
}

const echo = await client.completions.create({
  model,
  prompt: "Every morning, the old woman",
  max_tokens: 1,
  temperature: 0,
  logprobs: 1,
  echo: true,
});

console.log(JSON.stringify({ chat, finish, usage, echo }));
