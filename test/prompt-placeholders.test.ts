/** The placeholder check admin runs when a prompt version is saved (shared/prompt-placeholders.ts). */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { placeholderProblem, promptBodyPlaceholderProblem } from '../shared/prompt-placeholders.ts';

test('valid placeholders and text without {{svc: pass', () => {
  for (const t of ['', 'plain', '{{svc:a:string}}', '{{ svc:b.c-d_e:number }} and {{svc:f:boolean}}', '{{other}} svc: {{ svc }}', '{svc:a:int}']) {
    assert.equal(placeholderProblem(t), null, t);
  }
});

test('each malformed placeholder is named with what is wrong', () => {
  const cases: Array<[string, RegExp]> = [
    ['x {{svc:名前:string}} y', /^"\{\{svc:名前:string\}\}": the input name "名前" may hold only ASCII/],
    ['{{svc:my name:string}}', /input name "my name"/],
    ['{{svc:a:String}}', /the type "String" must be lowercase: "string"/],
    ['{{svc:b:int}}', /unknown type "int" \(string, number or boolean\)/],
    ['{{svc:c}}', /^"\{\{svc:c\}\}": no type/],
    ['{{svc::string}}', /no input name/],
    ['{{svc:a:b:string}}', /more than a name and a type/],
    ['{{svc:d:string', /not closed/],
    ['{{svc:d {{svc:e:string}}', /^"\{\{svc:d \{\{svc:e:string\}\}": the placeholder is not closed/],
    ['{{svc:ok:string}} then {{svc:bad:Number}}', /"\{\{svc:bad:Number\}\}"/],
  ];
  for (const [t, re] of cases) assert.match(placeholderProblem(t) ?? 'null', re, t);
});

test('a body: string contents and content parts are checked, with where', () => {
  assert.equal(promptBodyPlaceholderProblem({ messages: [{ role: 'user', content: '{{svc:a:string}}' }] }), null);
  assert.match(promptBodyPlaceholderProblem({ messages: [{ role: 'system', content: 'ok' }, { role: 'user', content: '{{svc:c}}' }] })!, /^messages\[1\]\.content: /);
  assert.match(promptBodyPlaceholderProblem({ messages: [{ role: 'user', content: [{ type: 'image_url' }, { type: 'text', text: '{{svc:b:int}}' }] }] })!, /^messages\[0\]\.content\[1\]\.text: /);
  assert.equal(promptBodyPlaceholderProblem({}), null);
});
