// Written by migserve: routes an OpenAI API request by its body's model,
// and names its conversation so that the proxy keeps a conversation on one
// replica (its prefix cache). The body is scanned, never parsed whole:
// what a request holds is its text, whatever the JSON's shape, and the scan
// gives the worker's other requests their turn every 64 KiB.
import crypto from 'crypto';

var CHUNK = 65536;
// The characters of a completion's prompt that name its conversation.
var PROMPT_KEY = 1024;
// The characters of each end of a text that its digest reads.
var SAMPLE = 2048;

function pause() {
  return new Promise(function(resolve) { setTimeout(resolve, 0); });
}

function error(r, status, message, code) {
  r.headersOut['Content-Type'] = 'application/json';
  r.return(status, JSON.stringify({error: {message: message,
      type: 'invalid_request_error', code: code}}) + '\n');
}

// The end of the JSON string that starts at `i` (its closing quote's
// index + 1), or -1.
function stringEnd(t, i) {
  for (var k = i + 1;;) {
    var q = t.indexOf('"', k);
    if (q < 0) return -1;
    var b = q - 1;
    while (b > i && t.charCodeAt(b) === 92) b--;
    if ((q - 1 - b) % 2 === 0) return q + 1;
    k = q + 1;
  }
}

function space(t, i) {
  for (var c = t.charCodeAt(i); c === 32 || c === 9 || c === 10 || c === 13;
       c = t.charCodeAt(++i)) {}
  return i;
}

// A scan of the text `t`: `mark` is where it next gives way.
function Scan(t) {
  return {t: t, mark: CHUNK};
}

// The end of the JSON string, literal or number at `i` (up to what
// follows it), or -1.
function scalarEnd(t, i) {
  if (t.charCodeAt(i) === 34) return stringEnd(t, i);
  for (var n = t.length; i < n; i++) {
    var c = t.charCodeAt(i);
    if (c === 44 || c === 93 || c === 125 || c === 32 || c === 9 ||
        c === 10 || c === 13) {
      return i;
    }
  }
  return -1;
}

// The end of the JSON value at `i` (a string, object or array whole; a
// literal or number up to what follows it), or -1. A scalar's end is
// found at once; an object's or array's giving way every CHUNK.
async function valueEnd(s, i) {
  var t = s.t, n = t.length, depth = 0;
  var first = t.charCodeAt(i);
  if (first !== 123 && first !== 91) return scalarEnd(t, i);
  for (;;) {
    if (i >= s.mark) {
      s.mark = i + CHUNK;
      await pause();
    }
    if (i >= n) return -1;
    var c = t.charCodeAt(i);
    if (c === 34) {
      i = stringEnd(t, i);
      if (i < 0) return -1;
      continue;
    }
    if (c === 123 || c === 91) {
      depth++;
    } else if ((c === 125 || c === 93) && --depth === 0) {
      return i + 1;
    }
    i++;
  }
}

// Scans the JSON object at `i`, calling `field(name, start, end)` for each
// of its fields (a name of up to 64 characters as a parser reads it, else
// ''; the value's extent). The index after it, or -1 where it is none.
async function objectEnd(s, i, field) {
  var t = s.t;
  if (t.charCodeAt(i) !== 123) return -1;
  i = space(t, i + 1);
  if (t.charCodeAt(i) === 125) return i + 1;
  for (;;) {
    if (t.charCodeAt(i) !== 34) return -1;
    var e = stringEnd(t, i);
    if (e < 0) return -1;
    var name = '';
    if (e - i <= 66) {
      try { name = JSON.parse(t.substring(i, e)); } catch (x) { return -1; }
    }
    i = space(t, e);
    if (t.charCodeAt(i) !== 58) return -1;
    i = space(t, i + 1);
    var c = t.charCodeAt(i);
    var end = c === 123 || c === 91 ? await valueEnd(s, i) : scalarEnd(t, i);
    if (end < 0) return -1;
    field(name, i, end);
    i = space(t, end);
    var next = t.charCodeAt(i);
    if (next === 125) return i + 1;
    if (next !== 44) return -1;
    i = space(t, i + 1);
  }
}

// The text from `a` to `b` as a short digest: of its length, its first
// and its last SAMPLE characters (njs keeps every string a request makes
// until it ends, so no more of a body is copied).
function digest(t, a, b) {
  var h = crypto.createHash('md5');
  h.update(String(b - a));
  h.update(t.substring(a, Math.min(b, a + SAMPLE)));
  if (b - a > SAMPLE) h.update(t.substring(Math.max(a + SAMPLE, b - SAMPLE), b));
  return h.digest('base64url');
}

// The end of a chat's leading messages up to and with its first user
// message (what every turn of one conversation repeats): the extent of
// `messages` is [a, b); the array's end where no message is a user's, -1
// where it is not an array.
async function leadEnd(s, a, b) {
  var t = s.t;
  if (t.charCodeAt(a) !== 91) return -1;
  var i = space(t, a + 1);
  if (t.charCodeAt(i) === 93) return b;
  for (;;) {
    var role = '';
    var c = t.charCodeAt(i);
    var end = c === 123 ? await objectEnd(s, i, function(name, x, y) {
                            if (name === 'role' && y - x < 16) role = t.substring(x, y);
                          })
            : c === 91 ? await valueEnd(s, i) : scalarEnd(t, i);
    if (end < 0) return -1;
    if (role === '"user"') return end;
    i = space(t, end);
    if (t.charCodeAt(i) !== 44) return b;
    i = space(t, i + 1);
  }
}

// The conversation of a request, '' where it names none: the client's
// `migserve-session` header, else the body's `prompt_cache_key` or `user`
// (OpenAI's fields for it), else a digest of its leading messages up to
// and with the first user message, or of its prompt's first characters.
async function sessionOf(r, s, at) {
  var header = r.headersIn['migserve-session'];
  if (header) return 'h' + header;
  var t = s.t;
  var named = ['prompt_cache_key', 'user'];
  for (var k = 0; k < named.length; k++) {
    var v = at[named[k]];
    if (v && t.charCodeAt(v[0]) === 34 && v[1] - v[0] > 2) {
      return named[k].charAt(0) + digest(t, v[0], v[1]);
    }
  }
  if (at.messages) {
    var end = await leadEnd(s, at.messages[0], at.messages[1]);
    if (end > 0) return 'm' + digest(t, at.messages[0], end);
  }
  if (at.prompt) {
    var p = at.prompt;
    return 'p' + digest(t, p[0], Math.min(p[1], p[0] + PROMPT_KEY));
  }
  return '';
}

// What routing reads from the body `t`: its top-level `model` ('' where it
// has none, or not a string) and its conversation (sessionOf); undefined
// where `t` is not one JSON object.
async function routingOf(r, t) {
  var s = Scan(t), at = Object.create(null);
  var end = await objectEnd(s, space(t, 0), function(name, a, b) {
    at[name] = [a, b];  // the last of two, as a parser keeps
  });
  if (end < 0 || space(t, end) !== t.length) return undefined;
  var model = '';
  if (at.model && t.charCodeAt(at.model[0]) === 34) {
    try { model = JSON.parse(t.substring(at.model[0], at.model[1])); } catch (x) {
      return undefined;
    }
  }
  return {model: model, session: await sessionOf(r, s, at)};
}

async function route(r) {
  if (r.method === 'GET' || r.method === 'HEAD') {
    r.variables.migserve_openai_model = '';
    r.internalRedirect('@migserve_openai');
    return;
  }
  var text = r.requestText;
  if (!text) {
    var length = r.headersIn['Content-Length'];
    var chunked = r.headersIn['Transfer-Encoding'] !== undefined;
    if (text === undefined && (chunked || (length && length !== '0'))) {
      error(r, 413, 'the request body is larger than the proxy reads to ' +
            'route it', 'body_too_large');
    } else {
      error(r, 400, 'the request has no body: a JSON object naming its ' +
            'model is expected', 'missing_body');
    }
    return;
  }
  var routing = await routingOf(r, text);
  if (routing === undefined) {
    error(r, 400, 'the request body is not a JSON object', 'invalid_json');
    return;
  }
  r.variables.migserve_openai_model = routing.model;
  r.variables.migserve_openai_session = routing.session;
  r.internalRedirect('@migserve_openai');
}

export default {route};
