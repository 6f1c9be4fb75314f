// Validation of protocol messages against the official DAP JSON schema
// (tests/dap/debugAdapterProtocol.json, draft 4: definitions + $ref), with ajv 8 + ajv-draft-04.
//
// A message is checked against the definition that the protocol gives it:
//   response, success true   -> "<Command>Response"  (first letter upper-cased), else "Response"
//   response, success false  -> "ErrorResponse"
//   event                    -> "<Event>Event", else "Event"
//   request                  -> "<Command>Request", else "Request"
'use strict';

const fs = require('fs');
const path = require('path');
const Ajv = require('ajv-draft-04');

const SCHEMA_PATH = path.resolve(__dirname, '..', '..', 'debugAdapterProtocol.json');
const SCHEMA_ID = 'debugAdapterProtocol.json';

const schema = JSON.parse(fs.readFileSync(SCHEMA_PATH, 'utf8'));
schema.id = SCHEMA_ID;

const ajv = new Ajv({ allErrors: true, strict: true, strictTypes: false, strictTuples: false });
// The schema's annotations that are not JSON Schema keywords: documentation only.
ajv.addKeyword({ keyword: '_enum', schemaType: 'array' });
ajv.addKeyword({ keyword: 'enumDescriptions', schemaType: 'array' });
// The number formats the schema names, checked for real.
const intFormat = (lo, hi) => ({ type: 'number', validate: (x) => Number.isInteger(x) && x >= lo && x <= hi });
ajv.addFormat('int32', intFormat(-(2 ** 31), 2 ** 31 - 1));
ajv.addFormat('uint32', intFormat(0, 2 ** 32 - 1));
ajv.addFormat('int64', intFormat(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER));
ajv.addFormat('uint64', intFormat(0, Number.MAX_SAFE_INTEGER));
ajv.addSchema(schema);

const compiled = new Map();
function validatorFor(definition) {
  let v = compiled.get(definition);
  if (!v) {
    v = ajv.compile({ $ref: `${SCHEMA_ID}#/definitions/${definition}` });
    compiled.set(definition, v);
  }
  return v;
}

const has = (definition) => Object.prototype.hasOwnProperty.call(schema.definitions, definition);
const upperFirst = (s) => (typeof s === 'string' && s.length ? s[0].toUpperCase() + s.slice(1) : '');

// The definition a message must satisfy.
function definitionFor(message) {
  if (message && message.type === 'response') {
    if (message.success === false) return 'ErrorResponse';
    const name = `${upperFirst(message.command)}Response`;
    return has(name) ? name : 'Response';
  }
  if (message && message.type === 'event') {
    const name = `${upperFirst(message.event)}Event`;
    return has(name) ? name : 'Event';
  }
  if (message && message.type === 'request') {
    const name = `${upperFirst(message.command)}Request`;
    return has(name) ? name : 'Request';
  }
  return 'ProtocolMessage';
}

// [] when the message is valid, else the problems, each as "definition: path message".
function validate(message) {
  const definition = definitionFor(message);
  const v = validatorFor(definition);
  if (v(message)) return [];
  return v.errors.map((e) => `${definition}: ${e.instancePath || '/'} ${e.message}` +
    (e.params && Object.keys(e.params).length ? ` ${JSON.stringify(e.params)}` : ''));
}

module.exports = { validate, definitionFor, SCHEMA_PATH };
