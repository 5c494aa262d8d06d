// Function names cut the way the native formatter prints them
// (src/native/report/format/native_frames.cc), for what matches reports
// by name: suppression rules and fingerprints. The report's frame lines
// themselves are the native formatter's.

// `napi_value__* Napi::details::WrapCallback<...>` (a template's return
// type) -> `Napi::details::WrapCallback<...>`. Stops at `operator`, whose
// name may hold spaces and unbalanced brackets (`operator new`, `operator<`).
function withoutReturnType(s: string): string {
  let depth = 0;
  let cut = -1;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (depth === 0 && s.startsWith('operator', i) && (i === 0 || /[\s:]/.test(s[i - 1]))) break;
    if (c === '<' || c === '(' || c === '{' || c === '[') depth++;
    else if (c === '>' || c === ')' || c === '}' || c === ']') depth--;
    else if (c === ' ' && depth === 0) cut = i;
  }
  return cut >= 0 ? s.slice(cut + 1) : s;
}

const LONG_TEMPLATE = 20;

// Long template argument lists become `<…>` and the parameter lists of
// enclosing functions `(…)`: `CallbackData<Napi::Value (*)(...), Napi::Value>::Wrapper(napi_env__*, ...)::'lambda'()`
// reads `CallbackData<…>::Wrapper(…)::'lambda'()`. The full name stays in the event.
function collapseNested(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    const open = c === '<' ? '<' : c === '(' ? '(' : undefined;
    if (!open || s.startsWith('operator', i - 8)) {
      out += c;
      continue;
    }
    const close = open === '<' ? '>' : ')';
    let depth = 0;
    let j = i;
    for (; j < s.length; j++) {
      if (s[j] === '<' || s[j] === '(') depth++;
      else if (s[j] === '>' || s[j] === ')') depth--;
      if (depth === 0) break;
    }
    if (j >= s.length || s[j] !== close) {
      out += c;
      continue;
    }
    const inner = s.slice(i + 1, j);
    const collapse = open === '<' ? inner.length > LONG_TEMPLATE : inner.length > 0;
    out += collapse ? `${open}…${close}` : `${open}${inner}${close}`;
    i = j;
  }
  return out;
}

/**
 * A demangled name cut to what a reader scans for: no return type,
 * parameter list or trailing qualifiers, no `(anonymous namespace)::`, long
 * template arguments and enclosing parameter lists elided. Namespaces,
 * classes and short template arguments stay.
 */
export function shortFunctionName(name: string): string {
  // llvm-symbolizer writes GCC's clones as ` (.cold)`, c++filt as ` [clone .cold]`.
  let s = name.replace(/\(anonymous namespace\)::/g, '').replace(/ \((\.[A-Za-z_][\w.]*)\)$/, ' [clone $1]');
  const clone = /( \[clone [^\]]*\])+$/.exec(s);
  let suffix = '';
  if (clone) {
    suffix = clone[0];
    s = s.slice(0, clone.index);
  }
  s = s.replace(/(\s+(const|volatile|&|&&))+$/, '');
  if (s.endsWith(')')) {
    let depth = 0;
    for (let i = s.length - 1; i >= 0; i--) {
      if (s[i] === ')') depth++;
      else if (s[i] === '(' && --depth === 0) {
        // The `()` of `operator()` is part of the name, not a parameter list.
        if (i > 0 && !s.slice(0, i).endsWith('operator')) s = s.slice(0, i);
        break;
      }
    }
  }
  return collapseNested(withoutReturnType(s)) + suffix;
}
