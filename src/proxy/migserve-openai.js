// Written by migserve: routes an OpenAI API request by its body's model.
// The body is scanned for its top-level "model", never parsed whole: what a
// request holds is its text, whatever the JSON's shape, and the scan gives
// the worker's other requests their turn every 64 KiB.
var CHUNK = 65536;

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

// The top-level "model" of the JSON object `t`: its string, '' where it has
// none (or not a string), undefined where `t` is not a JSON object.
async function modelOf(t) {
  var n = t.length, model = '', mark = CHUNK;
  var i = space(t, 0);
  if (t.charCodeAt(i) !== 123) return undefined;
  i = space(t, i + 1);
  if (t.charCodeAt(i) === 125) return space(t, i + 1) === n ? '' : undefined;
  for (;;) {
    if (t.charCodeAt(i) !== 34) return undefined;
    var e = stringEnd(t, i);
    if (e < 0) return undefined;
    var named = e - i === 7 && t.substring(i, e) === '"model"';
    i = space(t, e);
    if (t.charCodeAt(i) !== 58) return undefined;
    i = space(t, i + 1);
    var start = i, depth = 0;
    for (;;) {
      if (i >= mark) {
        mark = i + CHUNK;
        await pause();
      }
      if (i >= n) return undefined;
      var c = t.charCodeAt(i);
      if (c === 34) {
        i = stringEnd(t, i);
        if (i < 0) return undefined;
        if (depth === 0) break;
        continue;
      }
      if (c === 123 || c === 91) {
        depth++;
      } else if (c === 125 || c === 93) {
        if (depth === 0) break;
        if (--depth === 0) { i++; break; }
      } else if (depth === 0 && (c === 44 || c === 32 || c === 9 ||
                                 c === 10 || c === 13)) {
        break;
      }
      i++;
    }
    if (named) {
      model = '';
      if (t.charCodeAt(start) === 34) {
        try { model = JSON.parse(t.substring(start, i)); } catch (x) {
          return undefined;
        }
      }
    }
    i = space(t, i);
    var next = t.charCodeAt(i);
    if (next === 125) return space(t, i + 1) === n ? model : undefined;
    if (next !== 44) return undefined;
    i = space(t, i + 1);
  }
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
  var model = await modelOf(text);
  if (model === undefined) {
    error(r, 400, 'the request body is not a JSON object', 'invalid_json');
    return;
  }
  r.variables.migserve_openai_model = model;
  r.internalRedirect('@migserve_openai');
}

export default {route};
