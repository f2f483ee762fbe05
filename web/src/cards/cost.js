// The Cost card: time to train the tokens set, GPU-hours and cost at the price set (the page's
// own inputs, #f-tokens and #f-price, which a link carries beside the scenario).
import { $, fill } from '../ui/dom.js';
import { count, duration, integer, money, num, rate } from '../ui/format.js';
import { shown } from './context.js';
import { typedCount } from '../ui/typed.js';
import { metric } from './metric.js';

/** The tokens to train the cost form says: billions, or a count with its suffix ("15T"); NaN for none. */
export const tokensToTrain = () => typedCount($('#f-tokens').value, 1e9);

export function renderCost() {
  const report = shown.report;
  const out = $('#cost-out');
  if (!report || report.error) return;
  const tokens = tokensToTrain();
  const price = Number($('#f-price').value);
  const valid = $('#f-price').value !== '' && tokens >= 0 && price >= 0;
  const seconds_ = tokens / report.tokens_per_s;
  const gpuHours = report.gpus * seconds_ / 3600;
  const cost = gpuHours * price;
  fill(out,
    metric('train_time_s', 'Time to train', valid ? seconds_ : NaN, valid ? duration(seconds_) : '–',
      valid ? `at ${rate(report.tokens_per_s, 'tokens/s')}` : 'enter tokens and price', 'train_time',
      valid ? `${count(tokens)} tokens ÷ ${rate(report.tokens_per_s, 'tokens/s')} = ${duration(seconds_)}` : ''),
    metric('gpu_hours', 'GPU-hours', valid ? gpuHours : NaN, valid ? `${integer(gpuHours)} GPU-hours` : '–',
      valid ? `${integer(report.gpus)} GPUs × ${num(seconds_ / 3600)} h` : '', 'gpu_hours',
      valid ? `${integer(report.gpus)} GPUs × ${num(seconds_ / 3600)} h = ${integer(gpuHours)} GPU-hours` : ''),
    metric('cost_usd', 'Cost', valid ? cost : NaN, valid ? money(cost) : '–',
      valid ? `at $${num(price)} per GPU-hour` : '', 'cost',
      valid ? `${integer(gpuHours)} GPU-hours × $${num(price)} = ${money(cost)}` : ''));
}
