import Ajv, { ErrorObject, ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { AppError } from '../errors';

/** The one Ajv instance of the service. Schemas are compiled once and cached by identity. */
export const ajv = new Ajv({
  allErrors: true,
  coerceTypes: false,
  useDefaults: true,
  removeAdditional: false,
  strict: false,
});
addFormats(ajv);

/** Query strings arrive as strings: a second instance coerces them (same formats, same rules). */
export const ajvQuery = new Ajv({ allErrors: true, coerceTypes: 'array', useDefaults: true, strict: false });
addFormats(ajvQuery);

const cache = new WeakMap<object, ValidateFunction>();
const cacheQ = new WeakMap<object, ValidateFunction>();

export function compile(schema: object, coerce = false): ValidateFunction {
  const c = coerce ? cacheQ : cache;
  let v = c.get(schema);
  if (!v) {
    v = (coerce ? ajvQuery : ajv).compile(schema);
    c.set(schema, v);
  }
  return v;
}

export function details(errors: ErrorObject[] | null | undefined, prefix: string): { path: string; message: string }[] {
  return (errors ?? []).map((e) => {
    let path = prefix + (e.instancePath || '');
    if (e.keyword === 'required') path += `/${(e.params as { missingProperty: string }).missingProperty}`;
    if (e.keyword === 'additionalProperties')
      path += `/${(e.params as { additionalProperty: string }).additionalProperty}`;
    // Ajv's enum message omits the values; a client should not have to find them by trial.
    if (e.keyword === 'enum') {
      const allowed = (e.params as { allowedValues: unknown[] }).allowedValues;
      return {
        path,
        message: `must be one of: ${allowed.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ')}`,
      };
    }
    return { path, message: e.message ?? 'is invalid' };
  });
}

/**
 * Path of the first string (value or key) holding a NUL character, which PostgreSQL text cannot
 * store. Iterative: bodies may nest tens of thousands of levels deep.
 */
export function findNul(value: unknown, root: string): string | null {
  const stack: [unknown, string][] = [[value, root]];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return path;
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${path}/${i}`]);
    } else if (v && typeof v === 'object') {
      for (const [k, child] of Object.entries(v)) {
        if (k.includes('\u0000')) return `${path}/${k.split('\u0000').join('')}`;
        stack.push([child, `${path}/${k}`]);
      }
    }
  }
  return null;
}

/** An unpaired UTF-16 surrogate (a `\u` escape of half a character). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_SURROGATES = new RegExp(LONE_SURROGATE.source, 'g');

/**
 * The parsed body with every lone surrogate (in values and keys) replaced by U+FFFD, the rule
 * docs/api.md states for bodies. PostgreSQL's text columns get that from the driver's UTF-8
 * encoding, but a string bound as json (events, inbox items) would keep the `\u` escape, which
 * PostgreSQL refuses. Iterative, as findNul; strings without surrogates are left as they are.
 */
export function wellFormedStrings(value: unknown): unknown {
  const fix = (s: string) => (LONE_SURROGATE.test(s) ? s.replace(LONE_SURROGATES, '\uFFFD') : s);
  if (typeof value === 'string') return fix(value);
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        if (typeof v[i] === 'string') v[i] = fix(v[i] as string);
        else stack.push(v[i]);
      }
    } else if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      for (const k of Object.keys(o)) {
        const child = o[k];
        const key = fix(k);
        if (key !== k) {
          delete o[k];
          o[key] = child;
        }
        if (typeof child === 'string') o[key] = fix(child);
        else stack.push(child);
      }
    }
  }
  return value;
}

/**
 * Path of the first `constructor.prototype` key path (an object's `constructor` key holding an
 * object with a `prototype` key): code merging such a body into another object would reach
 * Object.prototype. The JSON parser already refuses `__proto__`. Iterative, as findNul.
 */
export function findConstructorPrototype(value: unknown, root: string): string | null {
  const stack: [unknown, string][] = [[value, root]];
  while (stack.length > 0) {
    const [v, path] = stack.pop()!;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${path}/${i}`]);
    } else if (v && typeof v === 'object') {
      const ctor = Object.prototype.hasOwnProperty.call(v, 'constructor')
        ? (v as Record<string, unknown>).constructor
        : undefined;
      if (ctor && typeof ctor === 'object' && Object.prototype.hasOwnProperty.call(ctor, 'prototype'))
        return `${path}/constructor`;
      for (const [k, child] of Object.entries(v)) stack.push([child, `${path}/${k}`]);
    }
  }
  return null;
}

/**
 * Integer query and path parameters must be written in plain decimal digits: Ajv's coercion
 * takes whatever Number() reads (`1e1`, `0x10`, ` 10`, `50.0`), which no client means to send.
 * A query parameter that is not a list, sent twice, gets one clear detail rather than one for each
 * keyword the list fails (type, enum, pattern).
 */
interface ParamNames {
  integers: string[];
  scalars: string[];
}
const paramNames = new WeakMap<object, ParamNames>();

function paramShapeErrors(
  schema: object,
  value: unknown,
  where: 'query' | 'params',
): { path: string; message: string }[] {
  let names = paramNames.get(schema);
  if (!names) {
    const props = (schema as { properties?: Record<string, { type?: unknown }> }).properties ?? {};
    const all = Object.keys(props);
    names = {
      integers: all.filter((n) => props[n].type === 'integer'),
      scalars: all.filter((n) => props[n].type !== 'array'),
    };
    paramNames.set(schema, names);
  }
  if (!value || typeof value !== 'object') return [];
  const out: { path: string; message: string }[] = [];
  const params = value as Record<string, unknown>;
  if (where === 'query')
    for (const name of names.scalars)
      if (Array.isArray(params[name]) && (params[name] as unknown[]).length > 1)
        out.push({ path: `${where}/${name}`, message: 'must be given once' });
  for (const name of names.integers) {
    const v = params[name];
    if (typeof v === 'string' && !/^-?[0-9]+$/.test(v))
      out.push({ path: `${where}/${name}`, message: 'must be integer' });
  }
  return out;
}

/**
 * Validates (and, for query/params, coerces) in place; throws 400 VALIDATION_FAILED. Body and
 * path strings with NUL characters are refused here for every route, so none can reach the
 * database as a 500.
 */
export function validate<T>(schema: object, value: unknown, where: 'body' | 'query' | 'params'): T {
  const v = compile(schema, where !== 'body');
  const shape = where === 'body' ? [] : paramShapeErrors(schema, value, where);
  if (shape.length > 0) throw new AppError('VALIDATION_FAILED', `Request ${where} is invalid`, { details: shape });
  if (!v(value)) {
    throw new AppError('VALIDATION_FAILED', `Request ${where} is invalid`, { details: details(v.errors, where) });
  }
  // Query strings are left to their services (search strips NUL; filters compare as text).
  const nul = where === 'query' ? null : findNul(value, where);
  if (nul) {
    throw new AppError('VALIDATION_FAILED', `Request ${where} is invalid`, {
      details: [{ path: nul, message: 'must not contain NUL characters' }],
    });
  }
  return value as T;
}
