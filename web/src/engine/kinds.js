// The timeline's block kinds the page draws, in the order of the numbers it gives them (the
// worker maps the module's kind numbers, named by timelineKinds(), onto these; any other kind is
// drawn as "other").
export const KINDS = ['forward', 'backward', 'send', 'dp_sync', 'optimizer'];
