// Native frame names as reports print them, through the one formatter and
// the one symbolizer of the native core (src/native/report/): short
// function names in frame lines, and C++ names demangled without any tool
// (kernel names of device reports, ELF names). The tools' own output is
// parsed by the native symbolizer; test/symbolize.test.mjs runs it on real
// tools.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';

const require = createRequire(import.meta.url);
const { formatReport } = require('../../packages/core-native/dist/report/format.js');
const { demangleNamesSync } = require('../../packages/core-native/dist/symbolize/index.js');

/** The frame line a report prints for one frame in `function`. */
function frameLine(fn) {
  const e = {
    tool: 'mate-guard',
    kind: 'heap-buffer-overflow',
    access: 'write',
    address: '0x1000',
    relation: 'past-end',
    distance: 1,
    fatal: true,
    pid: 1,
    test: null,
    accessStack: {
      unwind: 'unwind-tables',
      frames: [
        { module: '/repo/build/a.node', offset: 16, returnAddress: false, function: fn, source: 'llvm-symbolizer' },
      ],
    },
    allocation: null,
  };
  const line = formatReport(e)
    .split('\n')
    .find((l) => l.startsWith('==mate-guard==   #0 '));
  return line?.slice('==mate-guard==   #0 '.length).replace(/ \(a\.node\+0x10\)$/, '');
}

test('short function names keep namespaces, classes and short template arguments, drop parameters and return types, elide long templates', () => {
  const cases = {
    '(anonymous namespace)::FillInclusive(Napi::CallbackInfo const&)': 'FillInclusive',
    '(anonymous namespace)::FillInclusive(Napi::CallbackInfo const&) [clone .cold]': 'FillInclusive [clone .cold]',
    'v8::internal::MaybeHandle<v8::internal::Object> v8::internal::(anonymous namespace)::HandleApiCallHelper<false>(v8::internal::Isolate*, int)':
      'v8::internal::HandleApiCallHelper<false>',
    'X::{lambda(int, int)#1}::operator()(int, int) const': 'X::{lambda(…)#1}::operator()',
    'std::vector<int, std::allocator<int> >::operator[](unsigned long)': 'std::vector<…>::operator[]',
    "Napi::details::CallbackData<Napi::Value (*)(Napi::CallbackInfo const&), Napi::Value>::Wrapper(napi_env__*, napi_callback_info__*)::'lambda'()::operator()()":
      "Napi::details::CallbackData<…>::Wrapper(…)::'lambda'()::operator()",
    'std::vector<int>::push_back(int const&)': 'std::vector<int>::push_back',
    'Foo::operator<(Foo const&) const': 'Foo::operator<',
    'operator new(unsigned long)': 'operator new',
    main: 'main',
  };
  for (const [name, short] of Object.entries(cases)) assert.equal(frameLine(name), short, name);
});

test('C++ names demangle without c++filt, templates and operators included; plain names are left out', () => {
  const names = [
    '_ZN12_GLOBAL__N_113FillInclusiveERKN4Napi12CallbackInfoE',
    '_ZNK4mate16GuardedAllocator8InRegionEm',
    '_ZN4mate6WriterD1Ev',
    '_ZNSt6vectorIiSaIiEE9push_backERKi',
    '_Z14store_past_endPfi',
    'napi_create_buffer',
    '_Znot-a-name',
  ];
  assert.deepEqual(Object.fromEntries(demangleNamesSync(names)), {
    _ZN12_GLOBAL__N_113FillInclusiveERKN4Napi12CallbackInfoE:
      '(anonymous namespace)::FillInclusive(Napi::CallbackInfo const&)',
    _ZNK4mate16GuardedAllocator8InRegionEm: 'mate::GuardedAllocator::InRegion(unsigned long) const',
    _ZN4mate6WriterD1Ev: 'mate::Writer::~Writer()',
    _ZNSt6vectorIiSaIiEE9push_backERKi: 'std::vector<int, std::allocator<int> >::push_back(int const&)',
    _Z14store_past_endPfi: 'store_past_end(float*, int)',
  });
});
