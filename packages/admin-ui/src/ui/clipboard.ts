/**
 * Copies a value for the admin: the Clipboard API where the page may use it; else (plain http, a locked-down
 * browser) the value shown on the page is selected and the browser's own copy tried, so at worst a keyboard copy
 * takes it. True when the value reached the clipboard.
 */
export async function copyToClipboard(value: string, shown: HTMLElement): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(value);
    return true;
  } catch {
    select(shown);
    try {
      return document.execCommand('copy');
    } catch {
      return false;
    }
  }
}

function select(shown: HTMLElement): void {
  if (shown instanceof HTMLInputElement || shown instanceof HTMLTextAreaElement) {
    shown.focus();
    shown.select();
    return;
  }
  const range = document.createRange();
  range.selectNodeContents(shown);
  const selection = window.getSelection();
  selection?.removeAllRanges();
  selection?.addRange(range);
}
