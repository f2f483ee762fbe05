// The timeline's block kinds the page draws, in the order of the numbers it gives them (the
// worker maps the module's kind numbers, named by timelineKinds(), onto these; any other kind is
// drawn as "other").
// input_grad and weight_grad are the two halves of a split backward (B and W of the zero-bubble
// schedules, plan.schedule "zero_bubble"); 1F1B and the interleaved schedule run it whole.
export const KINDS = ['forward', 'backward', 'send', 'dp_sync', 'optimizer', 'input_grad', 'weight_grad'];
