// Drives an OpenAI-compatible endpoint with the official OpenAI Node SDK
// (npm `openai`), as a user of migserve's proxy would: the LLM tests
// (src/proxy/openai_client_test.cc) start the real nginx and emulated vLLM
// replicas, then run this to see what a real client sees.
//
//   node tools/openai-client/drive.mjs BASE_URL < requests.json
//
// Standard input: {"concurrency": N, "retries": N, "requests": [R, ...]}
// (retries: the SDK's maxRetries, 0 unless given), each R
//   {"api": "chat" | "completions", "model": "...", "stream": bool,
//    "headers": {...}, "max_tokens": N, "words": N, "repeat": N}
// (`words`: the prompt's length in words; `repeat`: R sent that many
// times). Standard output: one JSON object, {"results": [...]} in the
// order sent, each {"ok", "model", "chunks", "content", "finish_reason",
// "usage", "done"} or {"ok": false, "error": {"class", "status", "code",
// "type", "param", "message"}}: the SDK's error class (NotFoundError,
// BadRequestError, ...) and the error object it parsed.
import OpenAI from 'openai';

function prompt(words) {
  return Array.from({length: Math.max(1, words || 1)}, (_, i) => `w${i}`)
      .join(' ');
}

async function send(client, r) {
  const options = {headers: r.headers || {}};
  const body = {model: r.model, max_tokens: r.max_tokens};
  if (r.api === 'completions') {
    body.prompt = prompt(r.words);
  } else {
    body.messages = [{role: 'user', content: prompt(r.words)}];
  }
  const api = r.api === 'completions' ? client.completions :
                                        client.chat.completions;
  try {
    if (!r.stream) {
      const answer = await api.create(body, options);
      const choice = answer.choices[0];
      return {
        ok: true,
        model: answer.model,
        chunks: 0,
        content: r.api === 'completions' ? choice.text : choice.message.content,
        finish_reason: choice.finish_reason,
        usage: answer.usage || null,
        done: true,
      };
    }
    body.stream = true;
    body.stream_options = {include_usage: true};
    const stream = await api.create(body, options);
    const out = {ok: true, model: '', chunks: 0, content: '',
                 finish_reason: null, usage: null, done: false};
    for await (const chunk of stream) {
      out.model = chunk.model;
      if (chunk.usage) out.usage = chunk.usage;
      for (const choice of chunk.choices) {
        out.chunks += 1;
        out.content += (r.api === 'completions' ? choice.text :
                                                  choice.delta.content) || '';
        if (choice.finish_reason) out.finish_reason = choice.finish_reason;
      }
    }
    // The SDK's iterator ends at `data: [DONE]` or at the stream's end;
    // a stream cut short ends in an error, caught below.
    out.done = true;
    return out;
  } catch (e) {
    const error = e instanceof OpenAI.APIError ? e.error || {} : {};
    return {
      ok: false,
      error: {
        class: e.constructor.name,
        status: e.status === undefined ? null : e.status,
        code: error.code === undefined ? null : error.code,
        type: error.type === undefined ? null : error.type,
        param: error.param === undefined ? null : error.param,
        message: String(e.message),
      },
    };
  }
}

async function main() {
  const base = process.argv[2];
  if (!base) {
    process.stderr.write('usage: drive.mjs BASE_URL < requests.json\n');
    process.exit(2);
  }
  let text = '';
  for await (const part of process.stdin) text += part;
  const plan = JSON.parse(text);
  // No retries unless the plan asks (`retries`: the SDK's default is 2):
  // a test sees every answer as it came.
  const client = new OpenAI({baseURL: base, apiKey: 'unused',
                             maxRetries: plan.retries || 0, timeout: 120000});
  const queue = [];
  for (const r of plan.requests) {
    for (let k = 0; k < (r.repeat || 1); ++k) queue.push(r);
  }
  const results = new Array(queue.length);
  let next = 0;
  const workers = Array.from(
      {length: Math.max(1, plan.concurrency || 1)}, async () => {
        while (next < queue.length) {
          const i = next++;
          results[i] = await send(client, queue[i]);
        }
      });
  await Promise.all(workers);
  process.stdout.write(JSON.stringify({results}) + '\n');
}

main().catch((e) => {
  process.stderr.write(`drive.mjs: ${e.stack || e}\n`);
  process.exit(1);
});
