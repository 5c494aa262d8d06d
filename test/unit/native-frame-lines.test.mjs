// Pure logic of native frame symbolization: what the tools print, turned
// into locations and names (the report's frame lines are the native
// formatter's: packages/core-native/test/cpp/report_format_test.cc).
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { test } from 'node:test';

const require = createRequire(import.meta.url);
const { shortFunctionName } = require('../../packages/core-native/dist/symbolize/index.js');
const { parseAddr2line, parseLlvmSymbolizer, locationOf } = require('../../packages/core-native/dist/symbolize/tool-output.js');
const { demangleName } = require('../../packages/core-native/dist/symbolize/demangle.js');

test('short function names keep namespaces, classes and short template arguments, drop parameters and return types, elide long templates', () => {
  const cases = {
    '(anonymous namespace)::FillInclusive(Napi::CallbackInfo const&)': 'FillInclusive',
    '(anonymous namespace)::FillInclusive(Napi::CallbackInfo const&) [clone .cold]': 'FillInclusive [clone .cold]',
    'v8::internal::MaybeHandle<v8::internal::Object> v8::internal::(anonymous namespace)::HandleApiCallHelper<false>(v8::internal::Isolate*, int)': 'v8::internal::HandleApiCallHelper<false>',
    'X::{lambda(int, int)#1}::operator()(int, int) const': 'X::{lambda(…)#1}::operator()',
    'std::vector<int, std::allocator<int> >::operator[](unsigned long)': 'std::vector<…>::operator[]',
    "Napi::details::CallbackData<Napi::Value (*)(Napi::CallbackInfo const&), Napi::Value>::Wrapper(napi_env__*, napi_callback_info__*)::'lambda'()::operator()()": "Napi::details::CallbackData<…>::Wrapper(…)::'lambda'()::operator()",
    'std::vector<int>::push_back(int const&)': 'std::vector<int>::push_back',
    'Foo::operator<(Foo const&) const': 'Foo::operator<',
    'operator new(unsigned long)': 'operator new',
    'main': 'main',
  };
  for (const [name, short] of Object.entries(cases)) assert.equal(shortFunctionName(name), short, name);
});

test('llvm-symbolizer output: one block per address, inlined frames innermost first, unknowns dropped', () => {
  const out = [
    '(anonymous namespace)::FillInclusive(Napi::CallbackInfo const&)', '/repo/src/buggy.cc:36:37', '',
    'Execute', '/repo/src/buggy.cc:96:64', 'Napi::AsyncWorker::OnExecute(Napi::Env)', '/repo/napi-inl.h:5764:10', '',
    '??', '??:0:0', '',
    'v8impl::Invoke', 'js_native_api_v8.cc:0:0', '', '',
  ].join('\n');
  const blocks = parseLlvmSymbolizer(out, 4);
  assert.deepEqual(blocks, [
    [{ function: '(anonymous namespace)::FillInclusive(Napi::CallbackInfo const&)', file: '/repo/src/buggy.cc', line: 36, column: 37 }],
    [{ function: 'Execute', file: '/repo/src/buggy.cc', line: 96, column: 64 }, { function: 'Napi::AsyncWorker::OnExecute(Napi::Env)', file: '/repo/napi-inl.h', line: 5764, column: 10 }],
    [{}],
    [{ function: 'v8impl::Invoke', file: 'js_native_api_v8.cc' }],
  ]);
  assert.equal(parseLlvmSymbolizer(out, 3), undefined, 'a count mismatch is no answer');
});

test('addr2line output: groups keyed by address, discriminators and ? lines understood', () => {
  const out = [
    '0x00000000000062a8', '(anonymous namespace)::FillInclusive(Napi::CallbackInfo const&)', '/repo/src/buggy.cc:36 (discriminator 3)',
    '0x000000000000d7b8', 'Wrapper', '/repo/napi-inl.h:175', 'WrapCallback', '/repo/napi-inl.h:114',
    '0x0000000000000010', '??', '??:0',
    '0x0000000000000020', 'only_a_name', '??:?', '',
  ].join('\n');
  const found = parseAddr2line(out);
  assert.deepEqual(found.get(0x62a8), [{ function: '(anonymous namespace)::FillInclusive(Napi::CallbackInfo const&)', file: '/repo/src/buggy.cc', line: 36 }]);
  assert.deepEqual(found.get(0xd7b8), [{ function: 'Wrapper', file: '/repo/napi-inl.h', line: 175 }, { function: 'WrapCallback', file: '/repo/napi-inl.h', line: 114 }]);
  assert.deepEqual(found.get(0x10), [{}]);
  assert.deepEqual(found.get(0x20), [{ function: 'only_a_name' }]);
  assert.deepEqual(locationOf('f', 'C:/x/a:b.cc:12:3'), { function: 'f', file: 'C:/x/a:b.cc', line: 12, column: 3 });
});

test('plain mangled names demangle without c++filt; templates and operators stay mangled', () => {
  assert.equal(demangleName('_ZN12_GLOBAL__N_113FillInclusiveERKN4Napi12CallbackInfoE'), '(anonymous namespace)::FillInclusive');
  assert.equal(demangleName('_ZN12_GLOBAL__N_113FillInclusiveERKN4Napi12CallbackInfoE.part.0.cold'), '(anonymous namespace)::FillInclusive [clone .part.0] [clone .cold]');
  assert.equal(demangleName('_ZNK4mate16GuardedAllocator8InRegionEm'), 'mate::GuardedAllocator::InRegion');
  assert.equal(demangleName('_ZN4mate16GuardedAllocatorC2ERKNS_7OptionsE'), 'mate::GuardedAllocator::GuardedAllocator');
  assert.equal(demangleName('_ZN4mate6WriterD1Ev'), 'mate::Writer::~Writer');
  assert.equal(demangleName('_ZL3fooi'), 'foo');
  assert.equal(demangleName('_ZNSt6vectorIiSaIiEE9push_backERKi'), undefined);
  assert.equal(demangleName('_ZSt13__adjust_heapIPiliEvT_T0_S2_T1_'), undefined);
  assert.equal(demangleName('_ZN3FooplERKS_'), undefined);
  assert.equal(demangleName('napi_create_buffer'), undefined);
});
