// The qualified name of a plain Itanium-mangled C++ function, for when
// c++filt is not installed: `_ZN12_GLOBAL__N_113FillInclusiveERKN4Napi12CallbackInfoE`
// -> `(anonymous namespace)::FillInclusive`. Parameters are not decoded (the
// report prints no parameters); names with template arguments, operators or
// substitutions give undefined and stay mangled.

function sourceName(s: string, at: number): { name: string; next: number } | undefined {
  const m = /^\d+/.exec(s.slice(at));
  if (!m) return undefined;
  const len = Number(m[0]);
  const start = at + m[0].length;
  if (len <= 0 || start + len > s.length) return undefined;
  const id = s.slice(start, start + len);
  return { name: id.startsWith('_GLOBAL__N') ? '(anonymous namespace)' : id, next: start + len };
}

export function demangleName(mangled: string): string | undefined {
  const clone = /^(_Z[^.]*)((?:\.[A-Za-z_][A-Za-z0-9_]*(?:\.\d+)?)+)$/.exec(mangled);
  const base = clone ? clone[1] : mangled;
  // GCC's clone suffixes, as c++filt prints them: `.part.0.cold` -> two clones.
  const suffix = clone ? clone[2].match(/\.[A-Za-z_][A-Za-z0-9_]*(?:\.\d+)*/g)!.map((c) => ` [clone ${c}]`).join('') : '';
  if (!base.startsWith('_Z')) return undefined;
  let i = 2;
  if (base[i] === 'L') i++; // internal linkage
  const parts: string[] = [];
  if (base[i] === 'N') {
    i++;
    while ('rVKRO'.includes(base[i] ?? 'x')) i++; // cv- and ref-qualifiers of a member function
    if (base.startsWith('St', i)) {
      parts.push('std');
      i += 2;
    }
    while (i < base.length && base[i] !== 'E') {
      if (base[i] === 'C' && /[123]/.test(base[i + 1] ?? '') && parts.length) {
        parts.push(parts[parts.length - 1]);
        i += 2;
      } else if (base[i] === 'D' && /[012]/.test(base[i + 1] ?? '') && parts.length) {
        parts.push(`~${parts[parts.length - 1]}`);
        i += 2;
      } else {
        const n = sourceName(base, i);
        if (!n) return undefined; // templates, operators, substitutions: leave to c++filt
        parts.push(n.name);
        i = n.next;
      }
    }
    if (base[i] !== 'E') return undefined;
  } else {
    if (base.startsWith('St', i)) {
      parts.push('std');
      i += 2;
    }
    const n = sourceName(base, i);
    if (!n || base[n.next] === 'I') return undefined; // a template's arguments follow
    parts.push(n.name);
  }
  return parts.join('::') + suffix;
}
